"""The ``sqlite:///path`` session store: one SQLite file in WAL mode, safe for many processes.

Items live in one table keyed by ``(session_id, position)``. An append inserts each item at its
parent's position + 1 in the same statement that reads it, so an append after an item that is
no longer the leaf fails on the key: the compare-and-set is the database's, across processes. A
batch is one transaction. The URL's options (``synchronous``, ``busy_timeout``, ``writes``) are
those of :class:`agentkit_core.stores.SqliteFile`, as for checkpoint-sqlite; see README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from ._store import SqliteSessionStore

__all__ = ["SqliteSessionStore", "open_store"]

# sqlite3 and the worker thread load only when a store is opened or the class is asked for.
open_store, agentkit_register_session_stores, __getattr__ = store_plugin(
    __name__, "session", schemes="sqlite", opener="._store:SqliteSessionStore.open"
)
