from pathlib import Path

import pytest
from pgcluster import PgCluster

from agentkit_core import PluginManager
from agentkit_core.plugin import SessionStore
from agentkit_core.plugin import open_session_store
from agentkit_core.testing import SessionStoreConformance
from agentkit_core.testing import SessionStoreProcessConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


class TestPostgresConformance(SessionStoreConformance):
    @pytest.fixture(autouse=True)
    def _dsn(self, pg_dsn: str) -> None:
        self.dsn = pg_dsn

    async def make_store(self, tmp_path: Path) -> SessionStore:
        return await open_session_store(self.dsn, manager=PM)


class TestPostgresProcesses(SessionStoreProcessConformance):
    @pytest.fixture(autouse=True)
    def _cluster(self, pg_cluster: PgCluster) -> None:
        self.cluster = pg_cluster

    def make_url(self, tmp_path: Path) -> str:
        return self.cluster.dsn

    def after_kill(self, url: str) -> None:
        # The server goes down without a shutdown checkpoint: what it acknowledged must be on disk.
        self.cluster.restart()
