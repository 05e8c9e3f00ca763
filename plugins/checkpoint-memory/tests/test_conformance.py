from pathlib import Path

from agentkit_core.plugin import CheckpointPort
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.testing import CheckpointPortConformance


class TestMemoryConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return await open_checkpoint_store("memory://")
