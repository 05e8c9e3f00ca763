"""The ``sqlite:///path`` session store: one SQLite file in WAL mode, safe for many processes.

Items live in one table keyed by ``(session_id, position)``. An append inserts each item at its
parent's position + 1 in the same statement that reads it, so an append after an item that is
no longer the leaf fails on the key: the compare-and-set is the database's, across processes. A
batch is one transaction. The URL's options (``synchronous``, ``busy_timeout``, ``writes``) are
those of :class:`agentkit_core.SqliteFile`, as for checkpoint-sqlite; see README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from ._store import SqliteSessionStore

__all__ = ["SqliteSessionStore", "open_store"]


async def open_store(url: str) -> SqliteSessionStore:
    """The opener registered for ``sqlite``: open the file (and its table) the URL names."""
    from ._store import SqliteSessionStore

    return await SqliteSessionStore.open(url)


@hookimpl
def agentkit_register_session_stores(register: Any) -> None:
    """Offer ``sqlite:///path``."""
    register("sqlite", open_store)


def __getattr__(name: str) -> Any:
    # sqlite3 and the worker thread only when a store is asked for.
    if name == "SqliteSessionStore":
        from ._store import SqliteSessionStore

        return SqliteSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
