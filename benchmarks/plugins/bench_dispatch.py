"""Per-call cost of the kit's contested-field fold (Hooks) against a bare pluggy hook call.

Both call the same N implementations of agentkit_before_model_call, each returning the request.
The fold also does what pluggy does not: it checks each return value, times each synchronous
call (the slow-hook report) and is ready to attribute a raise. It is a coroutine, driven with
``send(None)`` (no event loop) because none of the implementations suspends, so only the
dispatch itself is measured.

    python benchmarks/plugins/bench_dispatch.py
"""

from __future__ import annotations

import timeit

from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginConfig
from agentkit_core import PluginManager
from agentkit_core import hookimpl
from agentkit_core.plugin import ModelRequest


class Impl:
    def __init__(self, i: int) -> None:
        self.AGENTKIT_NAME = f"p{i:03d}"

    @hookimpl
    def agentkit_before_model_call(self, ctx, request):
        return request


def drive(coro):
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("the fold suspended")


def measure(n: int, number: int = 2000, repeat: int = 40) -> tuple[float, float]:
    pm = PluginManager(
        entry_points=False, plugins=[Impl(i) for i in range(n)], config=PluginConfig()
    )
    hooks = Hooks.from_plugins(pm)
    bare = pm.pm.hook.agentkit_before_model_call
    ctx, request = object(), ModelRequest((Message.user("hi"),))
    assert drive(hooks.run_before_model_call(ctx, request)) is request
    assert len(bare(ctx=ctx, request=request)) == n

    def fold() -> None:
        drive(hooks.run_before_model_call(ctx, request))

    def pluggy_call() -> None:
        bare(ctx=ctx, request=request)

    # many short samples, interleaved, so that load from other jobs on the machine falls on
    # both alike and the best of each comes from a quiet moment
    folds, bares = [], []
    for _ in range(repeat):
        folds.append(timeit.timeit(fold, number=number))
        bares.append(timeit.timeit(pluggy_call, number=number))
    return min(folds) / number, min(bares) / number


def main() -> None:
    print("| implementations | Hooks fold (µs/call) | bare pluggy (µs/call) | ratio |")
    print("|---:|---:|---:|---:|")
    for n in (1, 10, 50):
        fold, bare = measure(n, number=2000 if n < 50 else 500)
        print(f"| {n} | {fold * 1e6:.2f} | {bare * 1e6:.2f} | {fold / bare:.2f}x |")


if __name__ == "__main__":
    main()
