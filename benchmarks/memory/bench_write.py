"""Memory writes per second on memory-sqlite vs a bare sqlite3 loop at the same durability.

Three writes, each as the memory tools make them: ``save`` of a new entry (base 0), ``save``
over an entry (based on the version last written) and ``patch`` (replace one passage, based on
the version last written). agentkit is ``await Memory.save(...)`` / ``await Memory.patch(...)``
on ``sqlite:///...`` at the store's default durability (WAL, ``synchronous=FULL``): the
facade checks scope, title and body, stamps the time, and the store runs one compare-and-set
statement (an INSERT that fails on a taken key, or an UPDATE ... WHERE version = ?); a patch
first reads the entry. The bare loop is what one would write by hand against the same table
(created by the store, so the same columns and key) at the same pragmas: a timestamp and the
same INSERT / UPDATE on the calling thread, and for a patch a SELECT, the count check and the
replace first. The two take turns, one write each (who goes first alternates), each on its own
file; a round's figure is writes over the time spent in that contender's writes, and its ratio
is ours over the bare loop's. The script prints the table's rows, each figure the median over
the rounds with the range, and the load average. Run it in the venv of ``setup.sh``: core and
every plugin, as the README installs them.

    python benchmarks/memory/bench_write.py [writes] [rounds]
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from datetime import UTC
from datetime import datetime
from pathlib import Path

from agentkit_core import Memory
from agentkit_core import open_memory
from agentkit_core.plugin import open_memory_store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

from agentkit_core import PluginManager

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

TABLE = "agentkit_memory_entries"
BODY = "The user prefers small commits, one change each, with the why in it. " * 4 + "Ship Fridays."
PASSAGES = ("Ship Fridays", "Ship Mondays")  # a patch swaps one for the other, back and forth
WRITES = {"new": "save, new entry", "over": "save over, based on a version", "patch": "patch"}


def now() -> str:
    return datetime.now(UTC).isoformat()


class Bare:
    """The hand-written loop over the store's own table, WAL and synchronous=FULL."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        self.n, self.version, self.turn = 0, 1, 0
        self.insert = f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?)"
        self.update = (
            f"UPDATE {TABLE} SET body = ?, version = ?, updated_at = ?, session = ? "
            "WHERE scope = ? AND title = ? AND version = ?"
        )
        self.conn.execute(self.insert, ("project", "Notes", BODY, 1, now(), "s"))

    async def new(self) -> None:
        self.n += 1
        self.conn.execute(self.insert, ("project", f"Entry {self.n}", BODY, 1, now(), "s"))

    async def over(self) -> None:
        row = (BODY, self.version + 1, now(), "s", "project", "Notes", self.version)
        assert self.conn.execute(self.update, row).rowcount == 1
        self.version += 1

    async def patch(self) -> None:
        old, new = PASSAGES[self.turn % 2], PASSAGES[(self.turn + 1) % 2]
        body, version = self.conn.execute(
            f"SELECT body, version FROM {TABLE} WHERE scope = ? AND title = ?",
            ("project", "Notes"),
        ).fetchone()
        assert body.count(old) == 1
        row = (body.replace(old, new, 1), version + 1, now(), "s", "project", "Notes", version)
        assert self.conn.execute(self.update, row).rowcount == 1
        self.version, self.turn = version + 1, self.turn + 1


class Ours:
    """``Memory.save`` and ``Memory.patch`` on a sqlite:/// store, based on the last version."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.n, self.version, self.turn = 0, 1, 0

    @classmethod
    async def open(cls, url: str) -> Ours:
        memory = await open_memory(url, manager=PM)
        await memory.save("project", "Notes", BODY, base=0, session="s")
        return cls(memory)

    async def new(self) -> None:
        self.n += 1
        await self.memory.save("project", f"Entry {self.n}", BODY, base=0, session="s")

    async def over(self) -> None:
        made = await self.memory.save("project", "Notes", BODY, base=self.version, session="s")
        self.version = made.version

    async def patch(self) -> None:
        old, new = PASSAGES[self.turn % 2], PASSAGES[(self.turn + 1) % 2]
        made = await self.memory.patch("project", "Notes", old, new, base=self.version, session="s")
        self.version, self.turn = made.version, self.turn + 1


async def interleaved(bare: Bare, ours: Ours, kind: str, n: int) -> tuple[float, float]:
    spent = [0.0, 0.0]
    steps = (getattr(bare, kind), getattr(ours, kind))
    for i in range(n):
        order = (0, 1) if i % 2 else (1, 0)
        for slot in order:
            start = time.perf_counter()
            await steps[slot]()
            spent[slot] += time.perf_counter() - start
    return n / spent[0], n / spent[1]


async def bench(tmp: Path, kind: str, n: int, rounds: int) -> None:
    rates: list[tuple[float, float]] = []
    for r in range(rounds + 1):  # round 0 warms up
        bare_path = tmp / f"{uuid.uuid4().hex}.db"
        store = await open_memory_store(f"sqlite:///{bare_path}", manager=PM)  # the same table
        await store.aclose()
        bare = Bare(bare_path)
        ours = await Ours.open(f"sqlite:///{tmp / uuid.uuid4().hex}.db")
        got = await interleaved(bare, ours, kind, n)
        bare.conn.close()
        await ours.memory.aclose()
        if r:
            rates.append(got)
    print(
        f"| {WRITES[kind]} | {spread([b for b, _ in rates], ',.0f')}/s "
        f"| {spread([o for _, o in rates], ',.0f')}/s | {spread([o / b for b, o in rates])}x |",
        flush=True,
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    loads = [os.getloadavg()[0]]
    print("| write | bare loop | agentkit | × bare loop (per round) |\n|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp_dir:
        for kind in WRITES:
            asyncio.run(bench(Path(tmp_dir), kind, n, rounds))
            loads.append(os.getloadavg()[0])
    print(
        f"\n{rounds} rounds of {n} writes after a warm-up, synchronous=FULL; load average "
        f"{min(loads):.1f}–{max(loads):.1f}."
    )


if __name__ == "__main__":
    main()
