"""PostgreSQL checkpoints: snapshots/s of a 10 KB state, checkpoint-postgres beside a bare loop.

Every writer targets a throwaway cluster this script starts (``.ci/pgcluster.py``, which the
plugins' tests use too: initdb, pg_ctl on a free 127.0.0.1 port, fsync on) with the server's default
``synchronous_commit=on``, so every commit waits for its WAL flush — the fsync bounds them all
(``--synchronous-commit off`` sets the server to off for every contender alike).

- ``bare psycopg``: one async psycopg connection in autocommit, ``json.dumps`` of the state and
  one ``INSERT`` per snapshot into a table of the plugin's shape, the version counted locally;
- ``port.put``: the same ``json.dumps`` and the store's ``put`` (pool, compare-and-set insert);
- ``Checkpointer.snapshot``: the facade a producer calls (encode, number, CAS put, decode);
- ``bare psycopg again``: the bare loop a second time, an A/A control: its distance from 1.00x
  is the noise of the machine.

Sequentially (one writer process) and with 4 writer processes at once, each on its own run.
The contenders take turns in short bursts within the same processes, and the ratio is the median
of the per-round ratios, so the drifting fsync speed of a shared disk hits each alike.

    python benchmarks/checkpoints/bench_postgres.py [--seconds 0.5] [--rounds 9]

with a Python that has agentkit-core and agentkit-checkpoint-postgres installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".ci"))

import psycopg  # noqa: E402
from pgcluster import PgCluster  # noqa: E402

from agentkit_core import Checkpointer  # noqa: E402
from agentkit_core import PluginManager  # noqa: E402
from agentkit_core.plugin import StoredCheckpoint  # noqa: E402
from agentkit_core.plugin import open_checkpoint_store  # noqa: E402

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

BARE_TABLE = "bare_checkpoints"
BARE_DDL = (
    f"CREATE TABLE IF NOT EXISTS {BARE_TABLE} (run_id text NOT NULL, namespace text NOT NULL, "
    "version bigint NOT NULL, status text NOT NULL, state text NOT NULL, metadata text NOT NULL, "
    "created_at timestamptz NOT NULL, PRIMARY KEY (run_id, namespace, version))"
)
BARE_INSERT = (
    f"INSERT INTO {BARE_TABLE} (run_id, namespace, version, status, state, metadata, created_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s::timestamptz)"
)
CONTROL = "bare psycopg again"
WRITERS = ("bare psycopg", CONTROL, "port.put", "Checkpointer.snapshot")


def ten_kb_state() -> dict[str, object]:
    """A transcript-like state whose JSON is about 10 KB."""
    messages: list[dict[str, str]] = []
    while len(json.dumps({"messages": messages})) < 10_000:
        i = len(messages)
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"turn {i}: " + "lorem ipsum dolor " * 12})
    return {"messages": messages, "step": 0}


Step = Callable[[int], Awaitable[object]]


async def bare_writer(dsn: str, run_id: str) -> tuple[Step, Callable[[], Awaitable[None]]]:
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    state = ten_kb_state()

    async def step(i: int) -> object:
        state["step"] = i
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        params = (run_id, "agent", i, "running", json.dumps(state), "{}", stamp)
        return await conn.execute(BARE_INSERT, params)

    return step, conn.close


async def port_writer(dsn: str, run_id: str) -> tuple[Step, Callable[[], Awaitable[None]]]:
    port = await open_checkpoint_store(dsn, manager=PM)
    state = ten_kb_state()

    async def step(i: int) -> object:
        state["step"] = i
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        record = StoredCheckpoint(run_id, "agent", i, "running", json.dumps(state), "{}", stamp)
        return await port.put(record)

    return step, port.aclose


async def checkpointer_writer(dsn: str, run_id: str) -> tuple[Step, Callable[[], Awaitable[None]]]:
    checkpointer = Checkpointer(await open_checkpoint_store(dsn, manager=PM))
    state = ten_kb_state()

    async def step(i: int) -> object:
        state["step"] = i
        return await checkpointer.snapshot(run_id, state)

    return step, checkpointer.aclose


MAKERS = {
    "bare psycopg": bare_writer,
    CONTROL: bare_writer,
    "port.put": port_writer,
    "Checkpointer.snapshot": checkpointer_writer,
}


def worker(dsn: str, start: Any, conn: Any) -> None:
    """One writer process: every contender set up once, then bursts on the parent's command."""

    async def run() -> None:
        writers = {
            kind: await make(dsn, f"bench-{uuid.uuid4().hex}") for kind, make in MAKERS.items()
        }
        done = dict.fromkeys(writers, 0)
        try:
            for kind, (step, _) in writers.items():  # warm up: connect, prepare, fill caches
                for _ in range(5):
                    done[kind] += 1
                    await step(done[kind])
            loop = asyncio.get_running_loop()
            while (command := await loop.run_in_executor(None, conn.recv)) is not None:
                kind, seconds = command
                step = writers[kind][0]
                await loop.run_in_executor(None, start.wait)
                count, cpu, deadline = 0, time.process_time(), time.perf_counter() + seconds
                while time.perf_counter() < deadline:
                    done[kind] += 1
                    count += 1
                    await step(done[kind])
                conn.send((count, time.process_time() - cpu))
        finally:
            for _, close in writers.values():
                await close()

    asyncio.run(run())


def measure(
    dsn: str, writers: int, rounds: int, seconds: float
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per contender and round: snapshots/s summed over ``writers`` processes writing at once,
    and the writer's own CPU time per snapshot (microseconds), which no disk noise moves.

    The writer processes stay up and the contenders take turns in short bursts (the order
    rotating each round), so a disk whose speed drifts — shared machines — hits all alike.
    """
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(writers + 1)
    pipes = [ctx.Pipe() for _ in range(writers)]
    procs = [ctx.Process(target=worker, args=(dsn, start, child)) for _, child in pipes]
    for proc in procs:
        proc.start()
    rates: dict[str, list[float]] = {kind: [] for kind in WRITERS}
    cpu: dict[str, list[float]] = {kind: [] for kind in WRITERS}
    try:
        for r in range(rounds):
            turn = r % len(WRITERS)
            for kind in WRITERS[turn:] + WRITERS[:turn]:
                for parent, _ in pipes:
                    parent.send((kind, seconds))
                start.wait(timeout=120)
                counts, times = zip(*(parent.recv() for parent, _ in pipes), strict=True)
                rates[kind].append(sum(counts) / seconds)
                cpu[kind].append(1e6 * sum(times) / max(1, sum(counts)))
    finally:
        for parent, _ in pipes:
            parent.send(None)
        for proc in procs:
            proc.join(timeout=60)
    if any(proc.exitcode != 0 for proc in procs):
        raise SystemExit("a writer process failed; see its traceback above")
    return rates, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="per burst")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument(
        "--synchronous-commit",
        choices=("on", "off"),
        default="on",
        help="the server's setting, for every contender alike (default: on, the server default)",
    )
    args = parser.parse_args()
    with PgCluster(settings={"synchronous_commit": args.synchronous_commit}) as dsn:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(BARE_DDL)
            server = conn.execute("SHOW server_version").fetchone()
            sync = conn.execute("SHOW synchronous_commit").fetchone()
        print(
            f"PostgreSQL {server[0] if server else '?'}, synchronous_commit="
            f"{sync[0] if sync else '?'}, fsync=on; psycopg {version('psycopg')}, "
            f"psycopg-pool {version('psycopg-pool')}; Python {platform.python_version()}; "
            f"state {len(json.dumps(ten_kb_state()))} bytes of JSON; median of {args.rounds} "
            f"interleaved rounds of {args.seconds:g} s bursts (ratio: median of per-round ratios)"
        )
        print()
        print(
            "| writers | contender | snapshots/s | vs bare psycopg | middle half of the ratios "
            "| writer CPU µs/snapshot |"
        )
        print("|---|---|---:|---:|---:|---:|")
        for writers in (1, 4):
            rates, cpu = measure(dsn, writers, args.rounds, args.seconds)
            label = "1 (sequential)" if writers == 1 else f"{writers} processes"
            for kind in WRITERS:
                ratios = [a / b for a, b in zip(rates[kind], rates["bare psycopg"], strict=True)]
                low, _, high = statistics.quantiles(ratios, n=4)
                print(
                    f"| {label} | {kind} | {statistics.median(rates[kind]):,.0f} | "
                    f"{statistics.median(ratios):.2f}x | {low:.2f}-{high:.2f} | "
                    f"{statistics.median(cpu[kind]):.0f} |"
                )


if __name__ == "__main__":
    main()
