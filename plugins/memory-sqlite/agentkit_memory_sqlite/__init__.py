"""The ``sqlite:///path`` memory store: every scope's entries in one SQLite file, in WAL mode.

One row per entry keyed by ``(scope, title)``; a write is one statement whose ``WHERE version
= ?`` (or the primary key, for a new entry) is the compare-and-set, across processes. The URL's
options (``synchronous``, ``busy_timeout``, ``writes``) are :class:`agentkit_core.SqliteFile`'s,
as for the other SQLite stores; see README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from ._store import SqliteMemoryStore

__all__ = ["SqliteMemoryStore", "open_store"]


async def open_store(url: str) -> SqliteMemoryStore:
    """The opener registered for ``sqlite``: open the file (and its table) the URL names."""
    from ._store import SqliteMemoryStore

    return await SqliteMemoryStore.open(url)


@hookimpl
def agentkit_register_memory_stores(register: Any) -> None:
    """Offer ``sqlite:///path``."""
    register("sqlite", open_store)


def __getattr__(name: str) -> Any:
    # sqlite3 and the worker thread only when a store is asked for.
    if name == "SqliteMemoryStore":
        from ._store import SqliteMemoryStore

        return SqliteMemoryStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
