"""Per-call cost of the kit's contested-field fold (Hooks) against a bare pluggy hook call.

Both call the same N implementations of agentkit_before_model_call, each returning the request
(or, with ``none``, nothing). The fold also does what pluggy does not: it checks each return
value, times the synchronous calls (the slow-hook report) and is ready to attribute a raise.

Two ways of driving the fold, neither with an event loop (no implementation suspends, so only
the dispatch is measured):

- ``await``: one coroutine awaits the fold again and again, as the agent loop awaits it; the
  bare pluggy calls are made in the same kind of coroutine;
- ``send``: each fold's coroutine is driven on its own with ``send(None)``, as this benchmark
  did before 2026-12-06: every call then also raises and catches ``StopIteration``
  (~0.3-0.5 µs here), which an ``await`` does not.

Paired rounds: each round times a sample of the fold and one of pluggy, in a new random order,
in CPU time of the thread (other processes' time on a shared machine is not counted), and
takes their ratio; the table gives the median ratio and its range, and the median times.

    python benchmarks/plugins/bench_dispatch.py [rounds]
"""

from __future__ import annotations

import os
import random
import statistics
import sys
from collections.abc import Callable
from collections.abc import Coroutine
from time import thread_time
from typing import Any

from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginConfig
from agentkit_core import PluginManager
from agentkit_core import hookimpl
from agentkit_core.plugin import ModelRequest


class Passes:
    def __init__(self, i: int) -> None:
        self.AGENTKIT_NAME = f"p{i:03d}"

    @hookimpl
    def agentkit_before_model_call(self, ctx, request):
        return request


class Abstains(Passes):
    @hookimpl
    def agentkit_before_model_call(self, ctx, request):
        return None


def finish(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("the fold suspended")


def samplers(n: int, kind: type[Passes], driver: str) -> tuple[Callable[[int], float], ...]:
    """Two functions timing ``k`` folds and ``k`` bare pluggy calls, in thread CPU seconds."""
    pm = PluginManager(
        entry_points=False, plugins=[kind(i) for i in range(n)], config=PluginConfig()
    )
    hooks = Hooks.from_plugins(pm)
    run, bare = hooks.run_before_model_call, pm.pm.hook.agentkit_before_model_call
    ctx, request = object(), ModelRequest((Message.user("hi"),))
    assert finish(run(ctx, request)) is request
    assert len(bare(ctx=ctx, request=request)) == (n if kind is Passes else 0)

    async def folds(k: int) -> None:
        for _ in range(k):
            await run(ctx, request)

    async def bares(k: int) -> None:
        for _ in range(k):
            bare(ctx=ctx, request=request)

    def sent(k: int) -> None:
        for _ in range(k):
            finish(run(ctx, request))

    def called(k: int) -> None:
        for _ in range(k):
            bare(ctx=ctx, request=request)

    def timed(body: Callable[[int], Any]) -> Callable[[int], float]:
        def sample(k: int) -> float:
            start = thread_time()
            made = body(k)
            if driver == "await":
                finish(made)  # the coroutine that awaits k folds (or makes k pluggy calls)
            return thread_time() - start

        return sample

    if driver == "await":
        return timed(folds), timed(bares)
    return timed(sent), timed(called)


def measure(n: int, kind: type[Passes], driver: str, rounds: int) -> dict[str, float]:
    fold, bare = samplers(n, kind, driver)
    k = 2000 if n < 50 else 500
    folds, bares, ratios = [], [], []
    for _ in range(rounds):
        if random.random() < 0.5:
            f, b = fold(k), bare(k)
        else:
            b, f = bare(k), fold(k)
        folds.append(f / k)
        bares.append(b / k)
        ratios.append(f / b)
    return {
        "fold": statistics.median(folds) * 1e6,
        "bare": statistics.median(bares) * 1e6,
        "ratio": statistics.median(ratios),
        "low": min(ratios),
        "high": max(ratios),
    }


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 31
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {rounds} rounds")
    print(
        "| driver | hooks return | implementations | Hooks fold (µs/call) | bare pluggy (µs/call) "
        "| ratio, median (range) |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for driver in ("await", "send"):
        for kind, returns in ((Passes, "the request"), (Abstains, "None")):
            for n in (1, 10, 50):
                m = measure(n, kind, driver, rounds)
                print(
                    f"| {driver} | {returns} | {n} | {m['fold']:.2f} | {m['bare']:.2f} "
                    f"| **{m['ratio']:.2f}x** ({m['low']:.2f}-{m['high']:.2f}) |"
                )
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
