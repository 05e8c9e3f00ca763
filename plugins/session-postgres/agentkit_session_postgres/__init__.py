"""The ``postgresql://`` session store: sessions in a PostgreSQL table, via async psycopg 3.

``open_session_store("postgresql://user@host:5432/db")`` (``postgres://`` too) returns a
:class:`PostgresSessionStore` that connects on first use. psycopg is imported only then, so
loading the plugin (``agentkit plugins list``) costs nothing. See README.md for the URL options,
the table and the guarantees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from ._store import PostgresSessionStore

__all__ = ["PostgresSessionStore", "open_store"]

# psycopg loads only when a store is opened or the class is asked for.
open_store, agentkit_register_session_stores, __getattr__ = store_plugin(
    __name__,
    "session",
    schemes=("postgresql", "postgres"),
    opener="._store:PostgresSessionStore.from_url",
)
