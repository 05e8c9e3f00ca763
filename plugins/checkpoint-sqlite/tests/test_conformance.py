from pathlib import Path

from agentkit_core.plugin import CheckpointPort
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.testing import CheckpointPortConformance


class TestSqliteConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return await open_checkpoint_store(f"sqlite:///{tmp_path}/runs.db")


class TestSqliteNormalConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return await open_checkpoint_store(f"sqlite:///{tmp_path}/runs.db?synchronous=normal")


class TestSqliteThreadConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return await open_checkpoint_store(f"sqlite:///{tmp_path}/runs.db?writes=thread")
