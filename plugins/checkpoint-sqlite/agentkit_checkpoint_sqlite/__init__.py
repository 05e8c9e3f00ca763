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
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from ._store import SqliteCheckpointStore

__all__ = ["SqliteCheckpointStore", "open_store"]


async def open_store(url: str) -> SqliteCheckpointStore:
    """The opener registered for ``sqlite``; the URL's options are ``SqliteFile``'s."""
    from ._store import SqliteCheckpointStore

    return await SqliteCheckpointStore.open(url)


@hookimpl
def agentkit_register_checkpoint_stores(register: Any) -> None:
    """Offer ``sqlite:///path``."""
    register("sqlite", open_store)


def __getattr__(name: str) -> Any:
    # sqlite3 and the worker thread only when a store is asked for.
    if name == "SqliteCheckpointStore":
        from ._store import SqliteCheckpointStore

        return SqliteCheckpointStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
