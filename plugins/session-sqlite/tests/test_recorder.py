from pathlib import Path

from agentkit_core.testing import RecorderProcessConformance


class TestSqliteRecorder(RecorderProcessConformance):
    def make_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/sessions.db"
