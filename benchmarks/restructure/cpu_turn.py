"""CPU time a turn of the agent loop, on the tree whose ``agent_loop`` folder is given.

    python cpu_turn.py TREE/benchmarks/agent_loop core|installed [--runs 20] [--turns 40]

Each tree keeps its own copy of the loop's scripts (they differ in the doors they import
from); this driver imports that copy's ``make`` and times it the same way for every tree:
``time.process_time`` over ``runs`` runs of ``turns`` tool turns, after three warm-up runs,
divided by the turns. The stub model's and the tools' own work is in it (a few µs, the same
in every tree). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("kind", choices=("core", "installed"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    sys.path.insert(0, args.folder)
    from bench_agentkit import make  # the tree's own copy, found at run time
    from common import REC

    run = (
        functools.partial(make, hooks=None)("async") if args.kind == "installed" else make("async")
    )

    async def measure() -> float:
        for _ in range(3):  # warm-up: imports, caches, schema building
            REC.reset(args.turns)
            await run(args.turns)
        gc.collect()
        spent = 0.0
        for _ in range(args.runs):
            REC.reset(args.turns)
            t0 = time.process_time()
            await run(args.turns)
            spent += time.process_time() - t0
        return spent / (args.runs * args.turns) * 1e6

    print(json.dumps({"cpu_us_per_turn": asyncio.run(measure())}))


if __name__ == "__main__":
    main()
