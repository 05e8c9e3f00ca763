"""The ``postgresql://`` checkpoint store: checkpoints in a PostgreSQL table, via async psycopg 3.

``open_checkpoint_store("postgresql://user@host:5432/db")`` (``postgres://`` too) returns a
:class:`PostgresCheckpointStore` that connects on first use. psycopg is imported only then, so
loading the plugin (``agentkit plugins list``) costs nothing. See README.md for the URL options,
the table and the durability guarantees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from ._store import PostgresCheckpointStore

__all__ = ["PostgresCheckpointStore", "open_store"]

# psycopg loads only when a store is opened or the class is asked for.
open_store, agentkit_register_checkpoint_stores, __getattr__ = store_plugin(
    __name__,
    "checkpoint",
    schemes=("postgresql", "postgres"),
    opener="._store:PostgresCheckpointStore.from_url",
)
