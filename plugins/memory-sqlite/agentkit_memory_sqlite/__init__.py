"""The ``sqlite:///path`` memory store: every scope's entries in one SQLite file, in WAL mode.

One row per entry keyed by ``(scope, title)``; a write is one statement whose ``WHERE version
= ?`` (or the primary key, for a new entry) is the compare-and-set, across processes. The URL's
options (``synchronous``, ``busy_timeout``, ``writes``) are those of
:class:`agentkit_core.stores.SqliteFile`, as for the other SQLite stores; see README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from ._store import SqliteMemoryStore

__all__ = ["SqliteMemoryStore", "open_store"]

# sqlite3 and the worker thread load only when a store is opened or the class is asked for.
open_store, agentkit_register_memory_stores, __getattr__ = store_plugin(
    __name__, "memory", schemes="sqlite", opener="._store:SqliteMemoryStore.open"
)
