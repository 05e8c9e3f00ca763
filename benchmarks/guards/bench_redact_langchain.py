"""LangChain's side: ``PIIMiddleware`` for ``email`` and ``credit_card`` (redact) on the request.

Both middlewares run ``before_model`` on a state whose last user message is the 100 KB text,
the second on what the first left, as an agent's chain would.
python benchmarks/guards/bench_redact_langchain.py ROUNDS N  -> one JSON line {"ms": per request}
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from typing import Any

from langchain.agents.middleware import PIIMiddleware
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from workload import request_text


def measure(rounds: int, n: int) -> float:
    chain = [
        PIIMiddleware("email", strategy="redact"),
        PIIMiddleware("credit_card", strategy="redact"),
    ]
    first: dict[str, Any] = {"messages": [HumanMessage(request_text())]}
    runtime: Any = Runtime()

    def once() -> dict[str, Any]:
        state = first
        for middleware in chain:
            update = middleware.before_model(state, runtime)
            if update is not None:
                state = {**state, **update}
        return state

    sent = once()["messages"][-1].content
    assert "@example.com" not in sent and sent.count("[REDACTED_CREDIT_CARD]") > 10
    times = []
    gc.disable()
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            once()
        times.append((time.perf_counter() - start) / n)
    gc.enable()
    return statistics.median(times) * 1e3


if __name__ == "__main__":
    print(json.dumps({"ms": measure(int(sys.argv[1]), int(sys.argv[2]))}))
