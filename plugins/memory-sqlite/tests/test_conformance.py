import sqlite3
from pathlib import Path

from agentkit_core import PluginManager
from agentkit_core.plugin import MemoryStore
from agentkit_core.plugin import open_memory_store
from agentkit_core.testing import MemoryStoreConformance
from agentkit_core.testing import MemoryStoreProcessConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


def spoil_row(db: Path, scope: str, title: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "UPDATE agentkit_memory_entries SET version = 'two' WHERE scope = ? AND title = ?",
            (scope, title),
        )
    conn.close()


class TestSqliteConformance(MemoryStoreConformance):
    async def make_store(self, tmp_path: Path) -> MemoryStore:
        return await open_memory_store(f"sqlite:///{tmp_path}/memory.db", manager=PM)

    async def spoil(self, store: MemoryStore, tmp_path: Path, scope: str, title: str) -> None:
        spoil_row(tmp_path / "memory.db", scope, title)


class TestSqliteThreadConformance(MemoryStoreConformance):
    async def make_store(self, tmp_path: Path) -> MemoryStore:
        return await open_memory_store(f"sqlite:///{tmp_path}/memory.db?writes=thread", manager=PM)


class TestSqliteProcesses(MemoryStoreProcessConformance):
    def make_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/memory.db"
