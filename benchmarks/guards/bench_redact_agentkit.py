"""agentkit's side: the redact guard's pass over a 100 KB request (e-mail and card detectors).

python benchmarks/guards/bench_redact_agentkit.py ROUNDS N  -> one JSON line {"ms": per request}
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time

from agentkit_guard_redact import RedactGuard
from workload import request_text

from agentkit_core import GuardChain
from agentkit_core import Message
from agentkit_core.plugin import ModelRequest


def measure(rounds: int, n: int) -> float:
    text = request_text()
    # cache=0: every pass redacts anew, as a request never seen before would be
    chain = GuardChain([RedactGuard(kinds=["card", "email"], cache=0)])
    request = ModelRequest((Message.user(text),))
    sent = chain.check_request(None, request).messages[0].text
    assert "@example.com" not in sent and sent.count("[redacted card]") > 10
    times = []
    gc.disable()
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            chain.check_request(None, request)
        times.append((time.perf_counter() - start) / n)
    gc.enable()
    return statistics.median(times) * 1e3


if __name__ == "__main__":
    print(json.dumps({"ms": measure(int(sys.argv[1]), int(sys.argv[2]))}))
