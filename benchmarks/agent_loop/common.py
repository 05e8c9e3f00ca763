"""The scenario and the measurement every framework's script shares.

An agent with three tools and a scripted model that calls one tool per turn, then answers.
The stub model and the tools stamp ``perf_counter_ns`` as they start and end, so a turn's
framework overhead is the time from the model returning to the model being called again,
minus the time spent inside the tool. Each script provides ``run(turns)`` and calls
:func:`main`, which prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import importlib.metadata
import json
import platform
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

TOOLS = ("add", "echo", "upper")
#: The most turns any run is allowed (each framework's turn or step limit is set from it).
MAX_TURNS = 20_000
ARGS = {"add": {"a": 2, "b": 3}, "echo": {"text": "hello"}, "upper": {"text": "hello"}}
ANSWER = "done"


class Recorder:
    """Stamps of one run: the model stub's entries and exits, and the time inside tools."""

    def __init__(self) -> None:
        self.reset(0)

    def reset(self, turns: int) -> None:
        self.turns = turns
        self.model_in: list[int] = []
        self.model_out: list[int] = []
        self.tool_ns: list[int] = []

    def step(self) -> tuple[str, dict[str, object]] | None:
        """Called by the stub on entry: the tool to call this turn (name, args), or None."""
        self.model_in.append(time.perf_counter_ns())
        turn = len(self.model_in) - 1
        if turn >= self.turns:
            return None
        name = TOOLS[turn % 3]
        return name, ARGS[name]

    def model_done(self) -> None:
        """Called by the stub just before it returns."""
        self.model_out.append(time.perf_counter_ns())

    def overheads_us(self) -> list[float]:
        """Framework time of each tool turn, in microseconds."""
        if len(self.model_in) != self.turns + 1 or len(self.tool_ns) != self.turns:
            raise RuntimeError(
                f"expected {self.turns + 1} model calls and {self.turns} tool calls, got "
                f"{len(self.model_in)} and {len(self.tool_ns)}"
            )
        return [
            (self.model_in[i + 1] - self.model_out[i] - self.tool_ns[i]) / 1000
            for i in range(self.turns)
        ]


REC = Recorder()


# The three tools, plain and async. Each stamps its own duration, which is subtracted.
def add(a: int, b: int) -> int:
    """Add two integers."""
    t0 = time.perf_counter_ns()
    out = a + b
    REC.tool_ns.append(time.perf_counter_ns() - t0)
    return out


def echo(text: str) -> str:
    """Return the text."""
    t0 = time.perf_counter_ns()
    out = text
    REC.tool_ns.append(time.perf_counter_ns() - t0)
    return out


def upper(text: str) -> str:
    """Return the text in upper case."""
    t0 = time.perf_counter_ns()
    out = text.upper()
    REC.tool_ns.append(time.perf_counter_ns() - t0)
    return out


async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return add(a, b)


async def echo_async(text: str) -> str:
    """Return the text."""
    return echo(text)


async def upper_async(text: str) -> str:
    """Return the text in upper case."""
    return upper(text)


SYNC_TOOLS = (add, echo, upper)
ASYNC_TOOLS = (add_async, echo_async, upper_async)
for _fn, _plain in zip(ASYNC_TOOLS, SYNC_TOOLS, strict=True):
    _fn.__name__ = _fn.__qualname__ = _plain.__name__  # the model calls them by these names


def bytecodes(call: Callable[..., object], *args: object) -> collections.Counter[str]:
    """The Python bytecodes ``call(*args)`` runs, by function (``file:name``): load plays no part.

    Counted with ``sys.settrace`` opcode events, so only Python code counts (a C function
    called costs its call's bytecodes); frames entered before (a task already running) are
    not seen.
    """
    counts: collections.Counter[str] = collections.Counter()

    def opcode(frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode":
            code = frame.f_code
            counts[f"{code.co_filename.rpartition('/')[2]}:{code.co_name}"] += 1
        return opcode

    def entered(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return opcode

    sys.settrace(entered)
    try:
        call(*args)
    finally:
        sys.settrace(None)
    return counts


def tools(kind: str) -> tuple[Callable[..., object], ...]:
    """The tools of a kind: ``async``, or ``def`` (``def-thread``: the same, run off the loop)."""
    return ASYNC_TOOLS if kind == "async" else SYNC_TOOLS


def main(
    make: Callable[[str], Callable[[int], Awaitable[object]]], framework: str, dist: str | None
) -> None:
    """Measure ``make(tool_kind)(turns)`` and print the figures as one JSON line.

    ``dist`` is the distribution whose version the figures are for (None: Python's).
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", choices=("async", "def", "def-thread"), default="async")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument(
        "--long", type=int, default=0, help="one run of this many turns: memory and windows"
    )
    args = parser.parse_args()
    run = make(args.tools)
    if args.long:
        figures = asyncio.run(_long(run, args.long))
        version = importlib.metadata.version(dist) if dist else platform.python_version()
        print(json.dumps({"framework": framework, "version": version, **figures}))
        return

    async def once(turns: int) -> tuple[list[float], float]:
        REC.reset(turns)
        t0 = time.perf_counter_ns()
        await run(turns)
        wall = time.perf_counter_ns() - t0
        stub = sum(o - i for i, o in zip(REC.model_in, REC.model_out, strict=True))
        return REC.overheads_us(), (wall - stub - sum(REC.tool_ns)) / 1000 / (turns + 1)

    async def measure() -> dict[str, object]:
        for _ in range(3):  # warm-up: imports, caches, schema building
            await once(args.turns)
        first: list[float] = []
        second: list[float] = []
        whole: list[float] = []
        half = args.turns // 2
        for _ in range(args.runs):
            per_turn, _ = await once(args.turns)
            first += per_turn[:half]
            second += per_turn[half:]
            whole.append((await once(half))[1])
        gc.collect()
        tracemalloc.start()
        await once(args.turns)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {
            "framework": framework if args.tools != "def-thread" else f"{framework}, blocking=True",
            "version": importlib.metadata.version(dist) if dist else platform.python_version(),
            "tools": "def" if args.tools == "def-thread" else args.tools,
            "turns_1_20_us": statistics.median(first),
            "turns_21_40_us": statistics.median(second),
            "whole_run_us_per_turn": statistics.median(whole),
            "peak_kib": peak / 1024,
        }

    print(json.dumps(asyncio.run(measure())))


async def _long(run: Callable[[int], Awaitable[object]], turns: int) -> dict[str, object]:
    """One run of ``turns`` turns, timed, then one traced: per-turn cost in windows, and memory.

    Windows are the median overhead of turns 1-100, the 100 around the middle and the last
    100; ``whole`` is the whole run's framework time per turn (stub and tools left out). The
    peak is tracemalloc's during a second run; ``rss_kib`` the process's peak RSS after both.
    """
    REC.reset(20)
    await run(20)  # warm-up: imports, caches, schema building
    gc.collect()
    REC.reset(turns)
    t0 = time.perf_counter_ns()
    await run(turns)
    wall = time.perf_counter_ns() - t0
    stub = sum(o - i for i, o in zip(REC.model_in, REC.model_out, strict=True))
    per_turn = REC.overheads_us()
    middle = turns // 2
    windows = {
        "first_100_us": statistics.median(per_turn[:100]),
        "middle_100_us": statistics.median(per_turn[middle - 50 : middle + 50]),
        "last_100_us": statistics.median(per_turn[-100:]),
        "whole_us": (wall - stub - sum(REC.tool_ns)) / 1000 / (turns + 1),
    }
    gc.collect()
    REC.reset(turns)
    tracemalloc.start()
    await run(turns)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"turns": turns, **windows, "peak_kib": peak / 1024, "rss_kib": rss}
