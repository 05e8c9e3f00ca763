"""The ``memory://`` checkpoint store: records in a dict of this process.

Nothing survives the process; use it in tests and for runs that need suspend/resume only while
the process lives. Records are immutable text, exactly what a durable store keeps, so the
``Checkpointer`` above it copies state the same way it does for SQLite or PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Mapping
from typing import TYPE_CHECKING

from agentkit_core import StorageError
from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from agentkit_core.plugin import StoredCheckpoint

__all__ = ["MemoryCheckpointStore"]


class MemoryCheckpointStore:
    """An in-process ``agentkit_core.plugin.CheckpointPort``; each instance is its own store."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], dict[int, StoredCheckpoint]] = {}
        self._blobs: dict[str, bytes] = {}  # content-part bytes by sha256, each held once
        self._closed = False

    def _versions_of(self, run_id: str, namespace: str) -> dict[int, StoredCheckpoint]:
        if self._closed:
            raise StorageError("this memory:// checkpoint store is closed; open a new one")
        return self._runs.get((run_id, namespace), {})

    async def put(self, record: StoredCheckpoint) -> bool:
        """Store ``record`` unless its version is taken (no await inside: atomic in a loop)."""
        self._versions_of(record.run_id, record.namespace)
        versions = self._runs.setdefault((record.run_id, record.namespace), {})
        if record.version in versions:
            return False
        versions[record.version] = record
        return True

    async def latest(self, run_id: str, namespace: str) -> StoredCheckpoint | None:
        """The highest version's record, or None."""
        versions = self._versions_of(run_id, namespace)
        return versions[max(versions)] if versions else None

    async def get(self, run_id: str, namespace: str, version: int) -> StoredCheckpoint | None:
        """That version's record, or None."""
        return self._versions_of(run_id, namespace).get(version)

    async def versions(self, run_id: str, namespace: str) -> list[int]:
        """The stored versions, ascending."""
        return sorted(self._versions_of(run_id, namespace))

    async def put_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Keep each blob under its sha256; one already held stays as it is."""
        self._versions_of("", "")  # refuses when closed
        for digest, data in blobs.items():
            self._blobs.setdefault(digest, data)

    async def get_blobs(self, hashes: Collection[str]) -> dict[str, bytes]:
        """The blobs held of ``hashes``."""
        self._versions_of("", "")
        return {h: self._blobs[h] for h in hashes if h in self._blobs}

    async def aclose(self) -> None:
        """Drop every record; later calls raise :class:`~agentkit_core.StorageError`."""
        self._closed = True
        self._runs.clear()
        self._blobs.clear()

    def __repr__(self) -> str:
        return f"<MemoryCheckpointStore memory:// at {id(self):#x}>"


def open_store(url: str) -> MemoryCheckpointStore:
    """A fresh, empty store for ``memory://``; the rest of the URL is ignored."""
    return MemoryCheckpointStore()


agentkit_register_checkpoint_stores = store_plugin(
    __name__, "checkpoint", schemes="memory", opener=open_store
).hook
