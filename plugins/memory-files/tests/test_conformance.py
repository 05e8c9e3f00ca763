from pathlib import Path

from agentkit_memory_files._store import file_name

from agentkit_core import PluginManager
from agentkit_core.plugin import MemoryStore
from agentkit_core.plugin import open_memory_store
from agentkit_core.testing import MemoryStoreConformance
from agentkit_core.testing import MemoryStoreProcessConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


class TestFilesConformance(MemoryStoreConformance):
    async def make_store(self, tmp_path: Path) -> MemoryStore:
        return await open_memory_store(f"file://{tmp_path}/memory", manager=PM)

    async def spoil(self, store: MemoryStore, tmp_path: Path, scope: str, title: str) -> None:
        (tmp_path / "memory" / scope / file_name(title)).write_bytes(b"---\nversion: two\n---\nx")


class TestFilesProcesses(MemoryStoreProcessConformance):
    def make_url(self, tmp_path: Path) -> str:
        return f"file://{tmp_path}/memory"
