"""The ``file:///dir`` memory store: one Markdown file per entry, one directory per scope.

An entry is ``<dir>/<scope>/<title>.md`` (characters a file name cannot hold are written as
``%XX``): optional front matter (``version``, ``updated``, ``session``) between ``---`` lines,
then the body. A person may edit, add or remove files by hand; a file that cannot be read is
reported by name and the rest of the scope still lists. Writes are a compare-and-set on the
version under a lock file, so several processes share a directory safely. See README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from ._store import FileMemoryStore

__all__ = ["FileMemoryStore", "open_store"]

open_store, agentkit_register_memory_stores, __getattr__ = store_plugin(
    __name__, "memory", schemes="file", opener="._store:FileMemoryStore.from_url"
)
