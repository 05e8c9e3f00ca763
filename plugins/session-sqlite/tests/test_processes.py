import sqlite3
from contextlib import closing
from pathlib import Path

from agentkit_core.testing import SessionStoreProcessConformance


class TestSqliteProcesses(SessionStoreProcessConformance):
    def make_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/sessions.db"

    def after_kill(self, url: str) -> None:
        with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn, conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()
