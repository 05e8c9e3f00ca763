"""agentkit's per-turn overhead with the three guards' chain, on benchmarks/agent_loop's scenario.

The agent of ``benchmarks/agent_loop/bench_agentkit.py`` (a scripted model calling one tool a
turn, 40 turns), with ``guards=`` the chain of ``redact``, ``max-input`` and ``denylist`` (a
file of ten terms) when ``--guards`` is given, and every installed plugin's hooks when
``--installed`` is (core only otherwise, ``hooks=Hooks()``). Prints agent_loop's JSON line;
with ``--cpu``, the process's CPU time per turn instead (whole runs, the stub model and the tools
included: the same in both cases, so a difference between them is the guards').
python benchmarks/guards/bench_turn.py [--guards] [--installed] --tools async --runs 20 --turns 40
python benchmarks/guards/bench_turn.py [--guards] [--installed] --cpu ROUNDS RUNS TURNS
"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))

from bench_agentkit import make
from common import REC
from common import main

from agentkit_core import PluginManager
from agentkit_core.plugin import build_guard_chain

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

TERMS = [f"codename-{i}" for i in range(9)] + ["re:\\bACME-\\d{3,}\\b"]


def chain() -> object:
    path = Path(tempfile.mkdtemp()) / "denylist.txt"
    path.write_text("\n".join(TERMS) + "\n", encoding="utf-8")
    return build_guard_chain(
        ["redact", "max-input", "denylist"],
        options={"max-input": {"max_tokens": 100_000}, "denylist": {"path": str(path)}},
        manager=PM,
    )


async def cpu(run: Callable[[int], Awaitable[object]], rounds: int, runs: int, turns: int) -> None:
    """Print the CPU µs per turn of ``runs`` runs of ``turns`` turns: median and range of rounds."""
    for _ in range(3):  # warm-up: imports, caches, schema building
        REC.reset(turns)
        await run(turns)
    figures = []
    for _ in range(rounds):
        gc.collect()
        start = time.process_time_ns()
        for _ in range(runs):
            REC.reset(turns)
            await run(turns)
        figures.append((time.process_time_ns() - start) / 1000 / runs / turns)
    low, high = min(figures), max(figures)
    print(json.dumps({"cpu_us_per_turn": statistics.median(figures), "range": [low, high]}))


if __name__ == "__main__":
    options: dict[str, object] = {}
    label = "agentkit"
    if "--installed" in sys.argv:  # every installed plugin's hooks, as an Agent has by default
        sys.argv.remove("--installed")
        options["hooks"] = None
        label += ", every plugin installed"
    if "--guards" in sys.argv:
        sys.argv.remove("--guards")
        options["guards"] = chain()
        label += " + 3 guards"
    if "--cpu" in sys.argv:
        at = sys.argv.index("--cpu")
        rounds, runs, turns = map(int, sys.argv[at + 1 : at + 4])
        asyncio.run(cpu(make("async", **options), rounds, runs, turns))
    else:
        main(functools.partial(make, **options), label, "agentkit-core")
