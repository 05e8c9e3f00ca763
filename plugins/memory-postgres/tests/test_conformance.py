from pathlib import Path

import psycopg
import pytest
from pgcluster import PgCluster

from agentkit_core import PluginManager
from agentkit_core.plugin import MemoryStore
from agentkit_core.plugin import open_memory_store
from agentkit_core.testing import MemoryStoreConformance
from agentkit_core.testing import MemoryStoreProcessConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


class TestPostgresConformance(MemoryStoreConformance):
    @pytest.fixture(autouse=True)
    def _dsn(self, pg_dsn: str) -> None:
        self.dsn = pg_dsn

    async def make_store(self, tmp_path: Path) -> MemoryStore:
        return await open_memory_store(self.dsn, manager=PM)

    async def spoil(self, store: MemoryStore, tmp_path: Path, scope: str, title: str) -> None:
        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
            await conn.execute(
                "UPDATE agentkit_memory_entries SET version = 0, updated_at = 'yesterday' "
                "WHERE scope = %s AND title = %s",
                (scope, title),
            )


class TestPostgresProcesses(MemoryStoreProcessConformance):
    @pytest.fixture(autouse=True)
    def _cluster(self, pg_cluster: PgCluster) -> None:
        self.cluster = pg_cluster

    def make_url(self, tmp_path: Path) -> str:
        return self.cluster.dsn
