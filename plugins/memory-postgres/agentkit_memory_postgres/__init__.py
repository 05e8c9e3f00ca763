"""The ``postgresql://`` memory store: one memory many workers share, in a PostgreSQL table.

``open_memory_store("postgresql://user@host:5432/db")`` (``postgres://`` too) returns a
:class:`PostgresMemoryStore` that connects on first use. psycopg is imported only then, so
loading the plugin (``agentkit plugins list``) costs nothing. See README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from ._store import PostgresMemoryStore

__all__ = ["PostgresMemoryStore", "open_store"]

# psycopg loads only when a store is opened or the class is asked for.
open_store, agentkit_register_memory_stores, __getattr__ = store_plugin(
    __name__,
    "memory",
    schemes=("postgresql", "postgres"),
    opener="._store:PostgresMemoryStore.from_url",
)
