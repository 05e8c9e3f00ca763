"""The memory block's cost per model call: read the store, render under the budget, compose.

Per model call the kit's ``instructions`` hook (``LiveInstructions.before_model_call``) reads
every configured scope from the store, renders the block as one part per entry under the
instruction budget (the most recently written kept, the rest reported), composes it with the
product's prompt and puts the result in the request. The floor is the least any memory could
do per call and still show the model fresh entries: read the same entries from the same store by
hand and join their texts, with no budget, no parts and no bookkeeping. For the SQLite store
the floor is one ``SELECT`` of the scope's rows with sqlite3 and a join; for the files store it
is reading every entry's file and joining the texts (the files store itself re-parses only the
files whose inode, time or size changed, so it can beat this floor).

The budget is set to half the full block, so every call leaves half the entries out and takes
the budget path. Two cases: memory unchanged between calls (most calls: the stores hand back
the same entry objects for unchanged rows and files, and the block reuses its last render
for the very same entries), and one entry saved before every call (untimed), so every call
renders anew. The two contenders take turns, call by call (who goes first alternates), and
each round's ratio is ours over the floor's time. The script prints the tables' rows: each
figure is the median over the rounds with the range, "per entry" (ours, median) shows the
growth from 100 to 10,000 entries (linear: flat per entry), and the load average is noted.
Run it in the venv of ``setup.sh``: core and every plugin, as the README installs them.

    python benchmarks/memory/bench_render.py [calls] [rounds]
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from agentkit_core import LiveInstructions
from agentkit_core import MemoryBlock
from agentkit_core import MemoryEntry
from agentkit_core import Message
from agentkit_core import TextPart
from agentkit_core import open_memory_block
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import open_memory_store
from agentkit_core.testing import make_test_ctx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

from agentkit_core import PluginManager

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

SIZES = (100, 1_000, 10_000)
BODY = "The user prefers small commits, one change each, with the why in the message. " * 2


async def fill(url: str, n: int) -> None:
    store = await open_memory_store(url, manager=PM)
    try:
        for i in range(n):
            stamp = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00+00:00"
            entry = MemoryEntry("project", f"Entry {i:05d}", f"{BODY}({i})", 1, stamp)
            assert await store.put(entry, 0)
    finally:
        await store.aclose()


class Ours:
    """One model call's instructions hook over a MemoryBlock, half the block's size budgeted."""

    def __init__(self, live: LiveInstructions, block: MemoryBlock) -> None:
        self.live, self.block = live, block
        self.ctx = make_test_ctx(run_id="bench")
        self.request = ModelRequest((Message.system(live.text), Message.user("go")))

    @classmethod
    async def open(cls, url: str) -> Ours:
        block = await open_memory_block(url, ["project"], max_entry_bytes=10_000, manager=PM)
        full = len(block.render(None).text.encode())
        live = LiveInstructions(
            [TextPart("You help with this repository."), block], budget=full // 2
        )
        return cls(live, block)

    async def touch(self, i: int) -> None:
        """Save entry ``i`` anew (untimed), so the next call reads a memory that moved."""
        store = self.block.memory.store
        found = await store.get("project", f"Entry {i:05d}")
        assert found is not None
        now = datetime.now(UTC).isoformat()
        moved = replace(found, body=found.body + ".", version=found.version + 1, updated_at=now)
        assert await store.put(moved, found.version)

    async def step(self) -> None:
        sent = await self.live.before_model_call(self.ctx, self.request)
        assert self.block.manifest.omitted and not self.block.manifest.dropped
        assert sent.messages[0].text


class SqliteFloor:
    """SELECT the scope's rows and join their texts."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    async def step(self) -> None:
        rows = self.conn.execute(
            "SELECT title, body FROM agentkit_memory_entries WHERE scope = 'project' ORDER BY title"
        ).fetchall()
        assert "\n\n".join(f"{t}\n{b}" for t, b in rows)


class FilesFloor:
    """Read every entry file of the scope and join the texts."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    async def step(self) -> None:
        texts = [p.read_text(encoding="utf-8") for p in sorted(self.directory.glob("*.md"))]
        assert "\n\n".join(texts)


async def interleaved(
    floor: Any, ours: Ours, calls: int, n: int, moves: bool
) -> tuple[float, float]:
    spent = [0.0, 0.0]
    for i in range(calls):
        if moves:
            await ours.touch((i * 7919) % n)
        order = ((0, floor), (1, ours)) if i % 2 else ((1, ours), (0, floor))
        for slot, contender in order:
            start = time.perf_counter()
            await contender.step()
            spent[slot] += time.perf_counter() - start
    return spent[0] / calls, spent[1] / calls


async def bench(kind: str, tmp: Path, n: int, calls: int, rounds: int, moves: bool) -> None:
    if kind == "sqlite":
        url = f"sqlite:///{tmp}/{kind}-{n}-{moves}.db"
        floor: Any = SqliteFloor(tmp / f"{kind}-{n}-{moves}.db")
    else:
        url = f"file://{tmp}/{kind}-{n}-{moves}"
        floor = FilesFloor(tmp / f"{kind}-{n}-{moves}" / "project")
    await fill(url, n)
    ours = await Ours.open(url)
    rows = []
    for r in range(rounds + 1):  # round 0 warms up
        got = await interleaved(floor, ours, calls, n, moves)
        if r:
            rows.append(got)
    await ours.block.aclose()
    per_entry = statistics.median(o for _, o in rows) / n * 1e6
    print(
        f"| {'SQLite' if kind == 'sqlite' else 'files'} | {n:,} "
        f"| {spread([f * 1e3 for f, _ in rows])} ms | {spread([o * 1e3 for _, o in rows])} ms "
        f"| {per_entry:.1f} µs | {spread([o / f for f, o in rows])}x |",
        flush=True,
    )


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp_dir:
        for moves in (False, True):
            case = "an entry saved before every call" if moves else "memory unchanged between calls"
            print(f"\n{case}:\n\n| store | entries | floor | agentkit | per entry | ratio |")
            print("|---|---:|---:|---:|---:|---:|")
            for kind in ("sqlite", "files"):
                for n in SIZES:
                    each = max(3, calls * 100 // n)
                    asyncio.run(bench(kind, Path(tmp_dir), n, each, rounds, moves))
                    loads.append(os.getloadavg()[0])
    print(
        f"\n{rounds} rounds after a warm-up, {calls} calls a round at 100 entries (fewer as the "
        f"scope grows); load average {min(loads):.1f}–{max(loads):.1f}."
    )


if __name__ == "__main__":
    main()
