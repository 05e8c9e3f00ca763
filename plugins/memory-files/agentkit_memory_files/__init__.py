"""The ``file:///dir`` memory store: one Markdown file per entry, one directory per scope.

An entry is ``<dir>/<scope>/<title>.md`` (characters a file name cannot hold are written as
``%XX``): optional front matter (``version``, ``updated``, ``session``) between ``---`` lines,
then the body. A person may edit, add or remove files by hand; a file that cannot be read is
reported by name and the rest of the scope still lists. Writes are a compare-and-set on the
version under a lock file, so several processes share a directory safely. See README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from ._store import FileMemoryStore

__all__ = ["FileMemoryStore", "open_store"]


async def open_store(url: str) -> FileMemoryStore:
    """The opener registered for ``file``: the directory the URL names (made on first write)."""
    from ._store import FileMemoryStore

    return FileMemoryStore.from_url(url)


@hookimpl
def agentkit_register_memory_stores(register: Any) -> None:
    """Offer ``file:///path/to/dir`` (and ``file:relative/dir``)."""
    register("file", open_store)


def __getattr__(name: str) -> Any:
    if name == "FileMemoryStore":
        from ._store import FileMemoryStore

        return FileMemoryStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
