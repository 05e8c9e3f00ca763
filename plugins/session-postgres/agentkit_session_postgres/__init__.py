"""The ``postgresql://`` session store: sessions in a PostgreSQL table, via async psycopg 3.

``open_session_store("postgresql://user@host:5432/db")`` (``postgres://`` too) returns a
:class:`PostgresSessionStore` that connects on first use. psycopg is imported only then, so
loading the plugin (``agentkit plugins list``) costs nothing. See README.md for the URL options,
the table and the guarantees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from ._store import PostgresSessionStore

__all__ = ["PostgresSessionStore", "open_store"]


def open_store(url: str) -> PostgresSessionStore:
    """Check ``url`` and return a store that connects on first use (no I/O here)."""
    from ._store import PostgresSessionStore

    return PostgresSessionStore.from_url(url)


def __getattr__(name: str) -> Any:
    if name == "PostgresSessionStore":
        from ._store import PostgresSessionStore

        return PostgresSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def agentkit_register_session_stores(register: Any) -> None:
    """Offer ``postgresql://`` and its alias ``postgres://``."""
    register("postgresql", open_store)
    register("postgres", open_store)
