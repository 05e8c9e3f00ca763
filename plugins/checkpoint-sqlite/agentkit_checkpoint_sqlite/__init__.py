"""The ``sqlite:///path`` checkpoint store: one SQLite file in WAL mode, safe for many processes.

The compare-and-set is the table's primary key ``(run_id, namespace, version)``: a put is one
``INSERT`` in its own transaction, and a taken version fails on the key, so two writers — two
tasks, two threads or two processes — can never overwrite each other.

A put runs on the caller's thread when the database is free (``writes=inline``, the default:
it never waits for a lock there — a busy database sends the put to the store's worker thread —
but the event loop does wait for the commit's fsync, a fraction of a millisecond on a local
disk). With ``?writes=thread`` every SQLite call runs on the worker thread, so the event loop
never waits on the disk, at the price of a thread hop per call. Reads always use the worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from ._store import SqliteCheckpointStore

__all__ = ["SqliteCheckpointStore", "open_store"]

# sqlite3 and the worker thread load only when a store is opened or the class is asked for.
open_store, agentkit_register_checkpoint_stores, __getattr__ = store_plugin(
    __name__, "checkpoint", schemes="sqlite", opener="._store:SqliteCheckpointStore.open"
)
