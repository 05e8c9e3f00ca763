from pathlib import Path

import pytest

from agentkit_core.testing import RecorderProcessConformance


class TestPostgresRecorder(RecorderProcessConformance):
    @pytest.fixture(autouse=True)
    def _dsn(self, pg_dsn: str) -> None:
        self.dsn = pg_dsn

    def make_url(self, tmp_path: Path) -> str:
        return self.dsn
