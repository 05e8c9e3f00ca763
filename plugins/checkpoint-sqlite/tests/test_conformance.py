from pathlib import Path

from agentkit_core import PluginManager
from agentkit_core.plugin import CheckpointPort
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.testing import CheckpointPortConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


class TestSqliteConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return await open_checkpoint_store(f"sqlite:///{tmp_path}/runs.db", manager=PM)


class TestSqliteNormalConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return await open_checkpoint_store(
            f"sqlite:///{tmp_path}/runs.db?synchronous=normal", manager=PM
        )


class TestSqliteThreadConformance(CheckpointPortConformance):
    async def make_port(self, tmp_path: Path) -> CheckpointPort:
        return await open_checkpoint_store(
            f"sqlite:///{tmp_path}/runs.db?writes=thread", manager=PM
        )
