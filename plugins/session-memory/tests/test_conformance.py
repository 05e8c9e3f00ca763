from pathlib import Path

from agentkit_core import PluginManager
from agentkit_core.plugin import SessionStore
from agentkit_core.plugin import open_session_store
from agentkit_core.testing import SessionStoreConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


class TestMemoryConformance(SessionStoreConformance):
    async def make_store(self, tmp_path: Path) -> SessionStore:
        return await open_session_store("memory://", manager=PM)
