"""agentkit's side: ``Policy.would`` on the batch, per call, for each policy size.

python benchmarks/policy/bench_agentkit.py ROUNDS N  -> one JSON line {size: µs per call}
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentkit_policy_rules import Policy
from workload import SIZES
from workload import arguments
from workload import batch
from workload import policy_toml

from agentkit_core import ToolCall


def measure(size: int, rounds: int, n: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "policy.toml"
        path.write_text(policy_toml(size), encoding="utf-8")
        policy = Policy.from_file(path)
    assert len(policy.rules) == size
    calls = [ToolCall(cid, name, arguments(args)) for cid, name, args in batch(size)]
    for call in calls:  # the same calls LangChain lets through
        assert policy.would(call, source="tools").kind == "allow", call
    would = policy.would
    times = []
    gc.disable()
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            for call in calls:
                would(call, source="tools")
        times.append((time.perf_counter() - start) / (n * len(calls)))
    gc.enable()
    return statistics.median(times) * 1e6


if __name__ == "__main__":
    rounds, n = int(sys.argv[1]), int(sys.argv[2])
    print(json.dumps({size: measure(size, rounds, n) for size in SIZES}))
