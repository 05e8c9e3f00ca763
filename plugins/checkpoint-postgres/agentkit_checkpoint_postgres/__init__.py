"""The ``postgresql://`` checkpoint store: checkpoints in a PostgreSQL table, via async psycopg 3.

``open_checkpoint_store("postgresql://user@host:5432/db")`` (``postgres://`` too) returns a
:class:`PostgresCheckpointStore` that connects on first use. psycopg is imported only then, so
loading the plugin (``agentkit plugins list``) costs nothing. See README.md for the URL options,
the table and the durability guarantees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from ._store import PostgresCheckpointStore

__all__ = ["PostgresCheckpointStore", "open_store"]


def open_store(url: str) -> PostgresCheckpointStore:
    """Check ``url`` and return a store that connects on first use (no I/O here)."""
    from ._store import PostgresCheckpointStore

    return PostgresCheckpointStore.from_url(url)


def __getattr__(name: str) -> Any:
    if name == "PostgresCheckpointStore":
        from ._store import PostgresCheckpointStore

        return PostgresCheckpointStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def agentkit_register_checkpoint_stores(register: Any) -> None:
    """Offer ``postgresql://`` and its alias ``postgres://``."""
    register("postgresql", open_store)
    register("postgres", open_store)
