"""LangChain's side: ``HumanInTheLoopMiddleware.after_model`` on the batch, per call.

Each tool is configured to interrupt ``when`` its command is not a read-only git command (the
same word-by-word test the agentkit rules make), so the batch passes without an interrupt.
python benchmarks/policy/bench_langchain.py ROUNDS N  -> one JSON line {size: µs per call}
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from typing import Any

from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from workload import READ_ONLY
from workload import SIZES
from workload import batch
from workload import tools


def read_only(command: str) -> bool:
    words = tuple(command.split())
    return any(words[: len(p)] == p for p in READ_ONLY)


def needs_a_person(request: Any) -> bool:
    return not read_only(request.tool_call["args"].get("command", ""))


def measure(size: int, rounds: int, n: int) -> float:
    config = {"allowed_decisions": ["approve", "reject"], "when": needs_a_person}
    middleware = HumanInTheLoopMiddleware({name: dict(config) for name in tools(size)})
    calls = [{"id": cid, "name": name, "args": args} for cid, name, args in batch(size)]
    state = {"messages": [AIMessage("", tool_calls=calls)]}
    runtime: Any = Runtime()
    assert middleware.after_model(state, runtime) is None  # no interrupt: all allowed
    after = middleware.after_model
    times = []
    gc.disable()
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            after(state, runtime)
        times.append((time.perf_counter() - start) / (n * len(calls)))
    gc.enable()
    return statistics.median(times) * 1e6


if __name__ == "__main__":
    rounds, n = int(sys.argv[1]), int(sys.argv[2])
    print(json.dumps({size: measure(size, rounds, n) for size in SIZES}))
