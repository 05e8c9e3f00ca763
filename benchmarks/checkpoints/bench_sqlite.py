"""Snapshots per second of a 10 KB state into SQLite: agentkit vs a bare loop vs langgraph.

Every contender writes one snapshot per transaction into a fresh WAL database at the same
``synchronous`` setting, sequentially and from 4 concurrent writer processes (each on its own
run, one file). The bare loop is what one would write by hand: ``json.dumps`` and an INSERT in
autocommit mode; the same loop with ``orjson.dumps`` is shown beside it, since agentkit's encoder
uses orjson (installed with the store), so the difference between the two is the encoder's.
langgraph-checkpoint-sqlite's savers are used as shipped (``put``/``aput`` of a checkpoint
whose channel values hold the state), their connection's ``synchronous`` set to the same value.
agentkit opens its store by URL (``Checkpointer.open``), so the plugin manager discovers every
installed plugin (the venv holds all of them, as the README installs them).
Rounds interleave the contenders, in an order rotated each round; each ratio to the bare loop is
taken within its round, and the table gives medians and ranges over the rounds, with the load
average.

    python benchmarks/checkpoints/bench_sqlite.py [snapshots] [rounds]

Needs agentkit-core, the plugins and langgraph-checkpoint-sqlite in one environment (see
setup.sh).
"""

from __future__ import annotations

import asyncio
import functools
import json
import multiprocessing as mp
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from agentkit_core import PluginManager

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

STATE: dict[str, Any] = {
    "task": "summarise the quarterly report",
    "turn": 7,
    "transcript": [
        {"role": "user" if i % 2 else "assistant", "content": f"message {i} " + "lorem " * 40}
        for i in range(35)
    ],
}
assert 9_500 < len(json.dumps(STATE)) < 11_000, len(json.dumps(STATE))


Span = tuple[float, float]


def bare(
    path: Path,
    sync: str,
    n: int,
    run: str,
    ready: Callable[[], object],
    dumps: Callable[[Any], str] = json.dumps,
) -> Span:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {sync}")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS bare (run_id TEXT, namespace TEXT, version INTEGER, "
        "status TEXT, state TEXT, metadata TEXT, created_at TEXT, "
        "PRIMARY KEY (run_id, namespace, version))"
    )
    ready()
    start = time.time()
    for v in range(1, n + 1):
        conn.execute(
            "INSERT INTO bare VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                run,
                "agent",
                v,
                "running",
                dumps(STATE),
                "{}",
                datetime.now(UTC).isoformat(),
            ),
        )
    end = time.time()
    conn.close()
    return start, end


def agentkit(
    path: Path, sync: str, n: int, run: str, ready: Callable[[], object], writes: str = "thread"
) -> Span:
    from agentkit_core import open_checkpointer

    async def main() -> Span:
        url = f"sqlite:///{path}?synchronous={sync}&writes={writes}"
        async with await open_checkpointer(url, manager=PM) as cp:
            ready()
            start = time.time()
            for _ in range(n):
                await cp.snapshot(run, STATE)
            return start, time.time()

    return asyncio.run(main())


def _lg_checkpoint() -> Any:
    from langgraph.checkpoint.base import empty_checkpoint

    cp = empty_checkpoint()  # a fresh uuid6 id and timestamp, as a graph step makes
    cp["channel_values"] = {"state": STATE}
    return cp


def langgraph_sync(path: Path, sync: str, n: int, run: str, ready: Callable[[], object]) -> Span:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute(f"PRAGMA synchronous = {sync}")
    config: dict[str, Any] = {"configurable": {"thread_id": run, "checkpoint_ns": ""}}
    ready()
    start = time.time()
    for i in range(n):
        config = saver.put(config, _lg_checkpoint(), {"step": i}, {})  # type: ignore[arg-type]
    end = time.time()
    conn.close()
    return start, end


def langgraph_async(path: Path, sync: str, n: int, run: str, ready: Callable[[], object]) -> Span:
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async def main() -> Span:
        async with aiosqlite.connect(path, timeout=30) as conn:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            await conn.execute(f"PRAGMA synchronous = {sync}")
            config: dict[str, Any] = {"configurable": {"thread_id": run, "checkpoint_ns": ""}}
            ready()
            start = time.time()
            for i in range(n):
                config = await saver.aput(config, _lg_checkpoint(), {"step": i}, {})  # type: ignore[arg-type]
            return start, time.time()

    return asyncio.run(main())


def bare_orjson(path: Path, sync: str, n: int, run: str, ready: Callable[[], object]) -> Span:
    import orjson  # here, not per snapshot: the loop should pay for the encoding alone

    dumps = orjson.dumps
    return bare(path, sync, n, run, ready, dumps=lambda value: dumps(value).decode())


Contender = Callable[[Path, str, int, str, Callable[[], object]], Span]
CONTENDERS: dict[str, Contender] = {
    "bare sqlite3 loop": bare,
    "bare loop, orjson": bare_orjson,
    "agentkit, writes=thread": agentkit,
    "agentkit, writes=inline": functools.partial(agentkit, writes="inline"),
    "langgraph SqliteSaver": langgraph_sync,
    "langgraph AsyncSqliteSaver": langgraph_async,
}


def _nothing() -> None:
    pass


def _prepare(path: Path, sync: str, fn: Contender) -> None:
    fn(path, sync, 1, "warm-up", _nothing)  # imports, the file and its tables: not timed


def sequential(name: str, sync: str, n: int, tmp: Path) -> float:
    path = tmp / f"{uuid.uuid4().hex}.db"
    fn = CONTENDERS[name]
    _prepare(path, sync, fn)
    start, end = fn(path, sync, n, "run", _nothing)
    return n / (end - start)


def _worker(name: str, path: str, sync: str, n: int, run: str, barrier: Any, out: Any) -> None:
    fn = CONTENDERS[name]
    fn(Path(path), sync, 1, f"warm-{run}", _nothing)
    out.put(fn(Path(path), sync, n, run, barrier.wait))


def concurrent(name: str, sync: str, n: int, tmp: Path, writers: int = 4) -> float:
    ctx = mp.get_context("spawn")
    path = tmp / f"{uuid.uuid4().hex}.db"
    _prepare(path, sync, CONTENDERS[name])
    barrier, out = ctx.Barrier(writers), ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(name, str(path), sync, n, f"w{i}", barrier, out))
        for i in range(writers)
    ]
    for p in procs:
        p.start()
    spans = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
        assert p.exitcode == 0, (name, p.exitcode)
    return writers * n / (max(e for _, e in spans) - min(s for s, _ in spans))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    names = list(CONTENDERS)
    loads: list[float] = []
    print(
        "| mode | synchronous | contender | snapshots/s | × bare loop (per round) |\n"
        "|---|---|---|---:|---:|"
    )
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        for mode, measure, count in (
            ("sequential", sequential, n),
            ("4 writer processes", concurrent, n // 2),
        ):
            for sync in ("FULL", "NORMAL"):
                rates: dict[str, list[float]] = {name: [] for name in CONTENDERS}
                ratios: dict[str, list[float]] = {name: [] for name in CONTENDERS}
                for r in range(rounds):
                    loads.append(os.getloadavg()[0])
                    order = names[r % len(names) :] + names[: r % len(names)]  # rotated
                    got = {name: measure(name, sync, count, tmp) for name in order}
                    for name, rate in got.items():
                        rates[name].append(rate)
                        ratios[name].append(rate / got["bare sqlite3 loop"])
                for name in names:
                    rate, ratio = rates[name], ratios[name]
                    print(
                        f"| {mode} | {sync} | {name} | {statistics.median(rate):,.0f} "
                        f"({min(rate):,.0f}–{max(rate):,.0f}) | {statistics.median(ratio):.2f}x "
                        f"({min(ratio):.2f}–{max(ratio):.2f}) |",
                        flush=True,
                    )
    print(
        f"\n{rounds} interleaved rounds (contender order rotated each round), {n} snapshots "
        f"sequentially, {n // 2} per writer with 4 writers; load average "
        f"{min(loads):.1f}–{max(loads):.1f}; SQLite {sqlite3.sqlite_version}, Python "
        f"{sys.version.split()[0]}."
    )


if __name__ == "__main__":
    main()
