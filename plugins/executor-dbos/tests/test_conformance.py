from pathlib import Path
from typing import Any

import pytest
from agentkit_executor_dbos import DBOSExecutor

from agentkit_core.plugin import Executor
from agentkit_core.testing import ExecutorConformance


class TestDBOSExecutor(ExecutorConformance):
    @pytest.fixture(autouse=True)
    def _database(self, tmp_path: Path) -> None:
        self.url = f"sqlite:///{tmp_path / 'runs.sqlite'}"

    def make_executor(self, **options: Any) -> Executor:
        return DBOSExecutor(database=self.url, **options)

    def close_executor(self, executor: Executor) -> None:
        assert isinstance(executor, DBOSExecutor)
        executor.close()
