"""A turn's recording of one transcript: agentkit's sqlite:// beside openai-agents' SQLiteSession.

Each side records the agent_loop transcript (``benchmarks/agent_loop/common.py``: a task, then
40 turns of one tool call each, add / echo / upper in turn) into a new session of its own SQLite
file per run, writing a turn as its own framework's loop writes it:

- **openai-agents** ``SQLiteSession.add_items``: one call a turn with the two items its
  ``Runner`` saves (the ``function_call`` and its ``function_call_output``, captured from a
  ``Runner.run`` of the scenario), after the tool ran. The store runs each call on a worker
  thread (``asyncio.to_thread``), in WAL mode.
- **agentkit** ``Recorder`` on ``sqlite:///``: what its loop records a turn, the answer
  (``record_response``, its calls in its message) appended before the tool runs (the in-flight
  mark of a tool that is not idempotent), then the result (``record_messages``): two items in
  two appends, each a compare-and-set on the leaf; and, items for items, the same two in one
  append (an idempotent tool's turn).

At each side's default durability (SQLite ``synchronous=FULL``: SQLiteSession leaves SQLite's
default, agentkit's default is ``full``), at ``synchronous=NORMAL`` (SQLiteSession given the
pragma on each connection it opens), and in memory (SQLiteSession's own default ``:memory:``;
agentkit's ``memory://``). A turn's cost is the wall time of its writes (median turn of a run,
median of the runs) and the process's CPU time over the run's turns (worker threads included).
The sides run in separate processes (each in its own venv), taking turns in an order that
changes every round; the ratio is agentkit over openai-agents within a round.

    python benchmarks/sessions/bench_sqlite_session.py [--rounds 7] [--runs 20] [--write]

The openai-agents venv is ``benchmarks/.envs/agent_loop-openai-agents`` (agent_loop's
``setup.sh``); ``--write`` writes ``RESULTS-sqlite-session.md`` beside this file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OPENAI_PYTHON = HERE.parent / ".envs" / "agent_loop-openai-agents" / "bin" / "python"
TURNS = 40
TOOLS = ("add", "echo", "upper")
ARGS = {"add": {"a": 2, "b": 3}, "echo": {"text": "hello"}, "upper": {"text": "hello"}}
OUTPUTS = {"add": "5", "echo": "hello", "upper": "HELLO"}

#: (label, store) of each row; the store names each side's setting.
STORES = (
    ("SQLite file, synchronous=FULL (each side's default)", "full"),
    ("SQLite file, synchronous=NORMAL", "normal"),
    ("in memory (SQLiteSession `:memory:`, agentkit `memory://`)", "memory"),
)
FULL_NOTE = (
    "At `synchronous=FULL` each commit waits for an fsync, whose time on a shared disk changes "
    "between the processes of a round (from 0.3 to 8 ms a commit here): read the CPU columns "
    "there. agentkit's loop writes the same two items a turn as openai-agents' Runner (the "
    "answer and the result) and appends the answer before the tool runs, which the Runner does "
    "not."
)
#: (label, side) of each contender.
SIDES = (
    ("openai-agents SQLiteSession.add_items (2 items, 1 call)", "openai-agents"),
    ("agentkit Recorder (2 items, 2 appends: the loop's turn)", "agentkit"),
    ("agentkit Recorder (2 items, 1 append)", "agentkit-one"),
)


def turn(i: int) -> tuple[str, str, str, str]:
    """Turn ``i``'s call: (call id, tool, arguments JSON, output)."""
    name = TOOLS[i % 3]
    return f"call_{i + 1}", name, json.dumps(ARGS[name]), OUTPUTS[name]


async def openai_side(store: str, path: str) -> Callable[[int], Awaitable[None]]:
    from agents import SQLiteSession

    class Normal(SQLiteSession):
        @staticmethod
        def _configure_connection(conn: Any) -> None:
            SQLiteSession._configure_connection(conn)
            conn.execute("PRAGMA synchronous=NORMAL")

    kind = Normal if store == "normal" else SQLiteSession
    session = kind(os.urandom(8).hex(), ":memory:" if store == "memory" else path)
    await session.add_items([{"content": "go", "role": "user"}])

    async def write(i: int) -> None:
        call, name, arguments, output = turn(i)
        await session.add_items(
            [
                {"arguments": arguments, "call_id": call, "name": name, "type": "function_call"},
                {"call_id": call, "output": output, "type": "function_call_output"},
            ]
        )

    return write


async def agentkit_side(store: str, path: str, one: bool) -> Callable[[int], Awaitable[None]]:
    from agentkit_core import Agent
    from agentkit_core import Message
    from agentkit_core import PluginManager
    from agentkit_core import Recorder
    from agentkit_core import Sessions
    from agentkit_core import ToolCall
    from agentkit_core import Usage
    from agentkit_core.plugin import open_session_store

    url = "memory://" if store == "memory" else f"sqlite:///{path}?synchronous={store}"
    sessions = Sessions(await open_session_store(url, manager=PluginManager()))
    recorder = await Recorder.start(sessions, {"model": "scripted"})
    ctx = Agent("bench", "test").new_context()  # the run id the items carry
    recorder.record_user(ctx, Message.user("go"))
    await recorder.flush()
    usage = Usage(100, 10, 1)  # what the agent_loop stub reports

    async def write(i: int) -> None:
        call, name, arguments, output = turn(i)
        answer = Message.assistant("", (ToolCall(call, name, arguments),))
        recorder.record_response(ctx, answer, model="scripted", usage=usage, finish_reason="tc")
        if not one:
            await recorder.flush()
        recorder.record_messages(ctx, [Message.tool(call, output, name=name)], source="tool")
        await recorder.flush()

    return write


async def side(name: str, store: str, runs: int) -> dict[str, float]:
    """``runs`` sessions of TURNS turns: the median turn's wall µs and CPU µs a turn."""
    walls: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs + 2):  # two warm-up runs
            path = f"{tmp}/{run}.db"
            if name == "openai-agents":
                write = await openai_side(store, path)
            else:
                write = await agentkit_side(store, path, name == "agentkit-one")
            times = []
            cpu = time.process_time()
            for i in range(TURNS):
                t0 = time.perf_counter()
                await write(i)
                times.append(time.perf_counter() - t0)
            cpu = time.process_time() - cpu
            if run >= 2:
                walls.append(statistics.median(times) * 1e6)
                cpus.append(cpu / TURNS * 1e6)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}


def spawn(name: str, store: str, runs: int) -> dict[str, float]:
    python = str(OPENAI_PYTHON) if name == "openai-agents" else sys.executable
    out = subprocess.run(
        [python, __file__, "--side", name, "--store", store, "--runs", str(runs)],
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--side", choices=[s for _, s in SIDES])
    parser.add_argument("--store", choices=[s for _, s in STORES])
    args = parser.parse_args()
    if args.side:
        print(json.dumps(asyncio.run(side(args.side, args.store, args.runs))))
        return
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    got: dict[tuple[str, str], list[dict[str, float]]] = {}
    for r in range(args.rounds):
        for _, store in STORES:
            names = [s for _, s in SIDES]
            random.Random(r * 7 + len(store)).shuffle(names)
            for name in names:
                got.setdefault((store, name), []).append(spawn(name, store, args.runs))
        loads.append(os.getloadavg()[0])
        print(f"round {r + 1}: load {loads[-1]:.2f}", flush=True)
    rows = [summary(got, store, args.rounds) for _, store in STORES]
    for (label, _), row in zip(STORES, rows, strict=True):
        print(label, json.dumps(row))
    if args.write:
        write(rows, args, started, loads)


def summary(
    got: dict[tuple[str, str], list[dict[str, float]]], store: str, rounds: int
) -> dict[str, Any]:
    """Each side's medians and ranges, and agentkit's ratios to openai-agents per round."""
    row: dict[str, Any] = {}
    base = got[(store, "openai-agents")]
    for _, name in SIDES:
        mine = got[(store, name)]
        for key in ("wall", "cpu"):
            values = sorted(m[key] for m in mine)
            ratios = sorted(m[key] / b[key] for m, b in zip(mine, base, strict=True))
            row[f"{name}.{key}"] = (statistics.median(values), values[0], values[-1])
            row[f"{name}.{key}.ratio"] = (statistics.median(ratios), ratios[0], ratios[-1])
    return row


def write(
    rows: list[dict[str, Any]], args: argparse.Namespace, started: datetime, loads: list[float]
) -> None:
    lines = [
        "# Sessions: a turn's recording, agentkit's sqlite:// beside openai-agents' SQLiteSession",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {platform.machine()}, 2 CPUs (shared), Python "
        f"{platform.python_version()}, load average {min(loads):.1f}–{max(loads):.1f}, "
        f"{args.rounds} rounds of {args.runs} runs of {TURNS} turns a side, by `python "
        f"benchmarks/sessions/bench_sqlite_session.py --rounds {args.rounds} --runs "
        f"{args.runs} --write`.",
        "",
        __doc__.split("\n\n")[1],
        "",
        "µs a turn: median over rounds (range); the ratio is agentkit / openai-agents within a "
        "round, median (range).",
        "",
        "| store | recording | wall, median turn | ratio | CPU a turn | ratio |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for (label, _), row in zip(STORES, rows, strict=True):
        for side_label, name in SIDES:
            cells = []
            for key in ("wall", "cpu"):
                mid, low, high = row[f"{name}.{key}"]
                ratio, rlow, rhigh = row[f"{name}.{key}.ratio"]
                cells.append(f"{mid:.1f} ({low:.1f}–{high:.1f})")
                cells.append(
                    "1" if name == "openai-agents" else f"**{ratio:.2f}x** ({rlow:.2f}–{rhigh:.2f})"
                )
            lines.append(f"| {label} | {side_label} | {' | '.join(cells)} |")
    lines += ["", FULL_NOTE]
    (HERE / "RESULTS-sqlite-session.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
