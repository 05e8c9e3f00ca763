from pathlib import Path

from agentkit_core.plugin import SessionStore
from agentkit_core.plugin import open_session_store
from agentkit_core.testing import SessionStoreConformance


class TestSqliteConformance(SessionStoreConformance):
    async def make_store(self, tmp_path: Path) -> SessionStore:
        return await open_session_store(f"sqlite:///{tmp_path}/sessions.db")


class TestSqliteNormalConformance(SessionStoreConformance):
    async def make_store(self, tmp_path: Path) -> SessionStore:
        return await open_session_store(f"sqlite:///{tmp_path}/sessions.db?synchronous=normal")


class TestSqliteThreadConformance(SessionStoreConformance):
    async def make_store(self, tmp_path: Path) -> SessionStore:
        return await open_session_store(f"sqlite:///{tmp_path}/sessions.db?writes=thread")
