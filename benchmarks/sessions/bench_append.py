"""Appends per second of one ~1 KB item: session-sqlite / session-postgres vs a bare insert loop.

Each contender appends items one at a time to one session, each after the one before, at the
store's default durability: SQLite at ``synchronous=FULL`` (and NORMAL, for reference) in WAL
mode, PostgreSQL at the server's default ``synchronous_commit=on``, so every append waits for
its commit to reach the disk. The bare loops are what one would write by hand against the same
table (same columns, keys and index): ``json.dumps`` of the body, a fresh uuid and timestamp,
and an INSERT in autocommit mode, on the calling thread (sqlite3) or one async connection
(psycopg). agentkit is ``await Sessions.append(session, leaf, NewItem("user", body))``: it
checks the kind, encodes, stamps, and inserts through the compare-and-set INSERT ... SELECT.
The two contenders take turns, one append each (who goes first alternates), each on its own
file or session, so the load of a shared machine falls on both alike; each round's figure is
appends over the time spent in that contender's appends, and the ratio is the median round's.

    python benchmarks/sessions/bench_append.py [appends] [rounds]

Needs the venv of setup.sh (agentkit-core, session-sqlite, session-postgres, psycopg) and the
PostgreSQL server binaries (.ci/setup.d/20-postgres.sh).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".ci"))

import psycopg  # noqa: E402
from pgcluster import PgCluster  # noqa: E402

from agentkit_core import PluginManager  # noqa: E402
from agentkit_core import Sessions  # noqa: E402
from agentkit_core import open_sessions  # noqa: E402
from agentkit_core.plugin import NewItem  # noqa: E402

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

BODY: dict[str, Any] = {"text": "a user message " + "lorem ipsum dolor sit amet " * 36}
assert 950 < len(json.dumps(BODY)) < 1100, len(json.dumps(BODY))

TABLE = "bench_items"
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (session_id TEXT NOT NULL, position BIGINT NOT NULL, "
    "id TEXT NOT NULL UNIQUE, parent TEXT, kind TEXT NOT NULL, body TEXT NOT NULL, "
    "created_at {time} NOT NULL, PRIMARY KEY (session_id, position))",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_headers ON {TABLE} (created_at, session_id) "
    "WHERE position = 1",
)


def now() -> str:
    return datetime.now(UTC).isoformat()


class BareSqlite:
    """The hand-written loop's one step: json.dumps, a uuid, a timestamp, one INSERT."""

    def __init__(self, path: Path, sync: str) -> None:
        self.conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute(f"PRAGMA synchronous = {sync}")
        for statement in SCHEMA:
            self.conn.execute(statement.format(time="TEXT"))
        self.session, self.parent, self.position = uuid.uuid4().hex, None, 0
        self.insert = f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)"

    async def step(self) -> None:
        self.position += 1
        item = uuid.uuid4().hex
        row = (self.session, self.position, item, self.parent, "user", json.dumps(BODY), now())
        self.conn.execute(self.insert, row)
        self.parent = item


class BarePsycopg:
    """The same with one async psycopg connection in autocommit."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.session, self.parent, self.position = uuid.uuid4().hex, None, 0
        self.insert = f"INSERT INTO {TABLE} VALUES (%s, %s, %s, %s, %s, %s, %s::timestamptz)"

    @classmethod
    async def open(cls, dsn: str) -> BarePsycopg:
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        for statement in SCHEMA:
            await conn.execute(statement.format(time="timestamptz"))
        return cls(conn)

    async def step(self) -> None:
        self.position += 1
        item = uuid.uuid4().hex
        row = (self.session, self.position, item, self.parent, "user", json.dumps(BODY), now())
        await self.conn.execute(self.insert, row)
        self.parent = item


class Agentkit:
    """``Sessions.append`` of one item after the leaf."""

    def __init__(self, sessions: Sessions, session_id: str, leaf: str) -> None:
        self.sessions, self.session_id, self.leaf = sessions, session_id, leaf
        self.item = NewItem("user", BODY)

    @classmethod
    async def open(cls, url: str) -> Agentkit:
        sessions = await open_sessions(url, manager=PM)
        head = await sessions.create()
        return cls(sessions, head.session_id, head.id)

    async def step(self) -> None:
        [written] = await self.sessions.append(self.session_id, self.leaf, self.item)
        self.leaf = written.id


async def interleaved(bare: Any, ours: Agentkit, n: int) -> tuple[float, float]:
    """Appends/s of each, stepping them in turn (who goes first alternates)."""
    spent = [0.0, 0.0]
    for i in range(n):
        order = ((0, bare), (1, ours)) if i % 2 else ((1, ours), (0, bare))
        for slot, contender in order:
            start = time.perf_counter()
            await contender.step()
            spent[slot] += time.perf_counter() - start
    return n / spent[0], n / spent[1]


def report(title: str, rates: list[tuple[float, float]], names: tuple[str, str]) -> None:
    ratios = sorted(ours / bare for bare, ours in rates)
    bare = statistics.median(r[0] for r in rates)
    ours = statistics.median(r[1] for r in rates)
    print(f"\n{title}")
    print(f"  {names[0]:28} {bare:8.0f}/s")
    print(f"  {names[1]:28} {ours:8.0f}/s")
    each = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"  ratio per round {each}: median {statistics.median(ratios):.2f}x")


async def sqlite_rounds(tmp: Path, sync: str, n: int, rounds: int) -> list[tuple[float, float]]:
    rates = []
    for r in range(rounds + 1):  # round 0 warms up: imports, files, page cache
        bare = BareSqlite(tmp / f"{uuid.uuid4().hex}.db", sync)
        ours = await Agentkit.open(f"sqlite:///{tmp / uuid.uuid4().hex}.db?synchronous={sync}")
        try:
            got = await interleaved(bare, ours, n)
        finally:
            bare.conn.close()
            await ours.sessions.aclose()
        if r:
            rates.append(got)
    return rates


async def postgres_rounds(dsn: str, n: int, rounds: int) -> list[tuple[float, float]]:
    rates = []
    for r in range(rounds + 1):
        bare = await BarePsycopg.open(dsn)
        ours = await Agentkit.open(dsn)
        try:
            got = await interleaved(bare, ours, n)
        finally:
            await bare.conn.close()
            await ours.sessions.aclose()
        if r:
            rates.append(got)
    return rates


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    names = ("bare sqlite3 loop", "agentkit session-sqlite")
    with tempfile.TemporaryDirectory() as tmp_dir:
        for sync in ("FULL", "NORMAL"):
            rates = asyncio.run(sqlite_rounds(Path(tmp_dir), sync, n, rounds))
            report(f"SQLite, synchronous={sync}, {n} appends a round", rates, names)
    with PgCluster() as dsn:
        rates = asyncio.run(postgres_rounds(dsn, n, rounds))
        names = ("bare psycopg loop", "agentkit session-postgres")
        report(f"PostgreSQL, synchronous_commit=on, {n} appends a round", rates, names)


if __name__ == "__main__":
    main()
