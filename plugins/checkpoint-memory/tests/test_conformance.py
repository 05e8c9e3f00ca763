from pathlib import Path

from agentkit_core import PluginManager
from agentkit_core.plugin import CheckpointPort
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.testing import CheckpointPortConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


class TestMemoryConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return await open_checkpoint_store("memory://", manager=PM)
