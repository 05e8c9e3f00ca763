"""The ``postgresql://`` memory store: one memory many workers share, in a PostgreSQL table.

``open_memory_store("postgresql://user@host:5432/db")`` (``postgres://`` too) returns a
:class:`PostgresMemoryStore` that connects on first use. psycopg is imported only then, so
loading the plugin (``agentkit plugins list``) costs nothing. See README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from ._store import PostgresMemoryStore

__all__ = ["PostgresMemoryStore", "open_store"]


def open_store(url: str) -> PostgresMemoryStore:
    """Check ``url`` and return a store that connects on first use (no I/O here)."""
    from ._store import PostgresMemoryStore

    return PostgresMemoryStore.from_url(url)


def __getattr__(name: str) -> Any:
    if name == "PostgresMemoryStore":
        from ._store import PostgresMemoryStore

        return PostgresMemoryStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def agentkit_register_memory_stores(register: Any) -> None:
    """Offer ``postgresql://`` and its alias ``postgres://``."""
    register("postgresql", open_store)
    register("postgres", open_store)
