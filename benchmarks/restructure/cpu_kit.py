"""CPU time of one ``Kit(...)``, on the tree whose ``kit`` folder is given.

    python cpu_kit.py TREE/benchmarks/kit [--n 200] [--rounds 5]

The kit benchmark's own figure is wall time in one process, which a busy machine swings by
±50 %; this driver builds the same kit as ``benchmarks/kit/bench_agentkit.py`` (its base
options, from that tree's ``common``) and counts ``time.process_time``: the median over
``rounds`` rounds of ``n`` constructions, after 50 warm-up ones, collector off. Prints one
JSON line.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, args.folder)
    from common import instructions  # the tree's own copy, found at run time
    from common import tools

    from agentkit_core import Kit
    from agentkit_core import get_plugin_manager
    from agentkit_core.testing import TestModel

    get_plugin_manager()  # discovery is not what is measured
    base = {
        "model": TestModel(),
        "instructions": instructions(),
        "tools": tools(),
        "compactor": "truncation",
        "compactor_options": {"max_tokens": 8000},
        "guardrail": "web",
    }
    for _ in range(50):
        Kit(**base)
    means = []
    for _ in range(args.rounds):
        gc.collect()
        gc.disable()
        start = time.process_time()
        for _ in range(args.n):
            Kit(**base)
        means.append((time.process_time() - start) / args.n * 1e6)
        gc.enable()
    print(json.dumps({"cpu_us": statistics.median(means)}))


if __name__ == "__main__":
    main()
