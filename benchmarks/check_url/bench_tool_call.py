"""The web guardrail's cost per tool call, on the path an agent runs it.

Run: python benchmarks/check_url/bench_tool_call.py [--rounds N]   (in a venv with every plugin)

One tool call: the before_tool_call fold of the plugin's hooks, the invoker's tool chain (the
default middlewares, and the agent's egress() with the guardrail where the agent has one), and
the after_tool_call fold that frames the result. Three calls: tiny (``{"text": "hello"}`` ->
``HELLO``), typical (a URL, headers and a query -> 500 bytes of prose), html (-> 2 KB of
markup). Three set-ups: core only (no plugin hooks, no egress), every installed plugin's hooks
as an ``Agent(...)`` folds them by default (the README's install, no guardrail configured: the
web plugin's hooks check and frame with its defaults), and the same with ``guardrail="web"``
(the agent's ``egress()`` checks, the hooks frame). Printed: CPU microseconds per call (CPU
time, so a busy machine inflates it less than wall time) and each set-up's excess over core
only within the same round, median and range over interleaved rounds of 1,000 calls.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from agentkit_core import Hooks
from agentkit_core import PluginManager
from agentkit_core import Tool
from agentkit_core import ToolResult
from agentkit_core.plugin import ToolInvocation
from agentkit_core.plugin import default_middlewares
from agentkit_core.plugin import egress
from agentkit_core.plugin import get_guardrail
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import tool_call

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

CALLS: dict[str, tuple[dict[str, Any], str]] = {
    "tiny": ({"text": "hello"}, "HELLO"),
    "typical": (
        {
            "url": "https://docs.example.com/v1/items?q=1",
            "headers": {"Accept": "text/html"},
            "timeout": 10,
            "query": "weather in Paris tomorrow",
            "filters": {"lang": "en", "since": "2024-01-15"},
        },
        "Paris, tomorrow: 18 C, light rain in the afternoon. " * 9,
    ),
    "html": (
        {"url": "https://example.com/"},
        "<div class='x'><p>Hello <b>world</b></p></div>\n" * 40,
    ),
}


class Echo(Tool):
    async def invoke(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        return ToolResult("unused")


VARIANTS = ("core only", "installed, no guardrail configured", "installed, guardrail='web'")


#: Distinct calls cycled through by a "fresh" call: more than the guardrail's caches hold.
FRESH = 1500


async def make_call(variant: str, arguments: dict[str, Any], text: str, fresh: bool) -> Any:
    """One tool call as an agent makes it, in ``variant``: a coroutine function to time.

    ``fresh``: each call's arguments and result differ from the last :data:`FRESH` calls', so
    nothing is served from a cache (the repeated call is the agent-loop benchmark's case).
    """
    middlewares = list(default_middlewares())
    hooks = Hooks()
    options: dict[str, Any] = {}
    if variant != "core only":
        hooks = Hooks.from_plugins(
            PluginManager()
        )  # every installed plugin, as Agent(...) folds them
        if variant.endswith("'web'"):
            guard = get_guardrail("web", manager=PM)
            middlewares.append(egress(guard))
            options["guardrail"] = guard
    ctx = make_test_ctx(ScriptedModel([]), middlewares=middlewares, **options)
    assert ctx.invoker is not None
    tool = Echo("t")
    made = [
        (tool_call("t", json.dumps({**arguments, "n": i})), ToolResult(f"{text} #{i}"))
        for i in range(FRESH if fresh else 1)
    ]
    turn = iter(range(1 << 62))

    async def one() -> None:
        call, result = made[next(turn) % len(made)]

        async def end(invocation: ToolInvocation) -> ToolResult:
            return result

        if hooks.before_tool_call:
            await hooks.run_before_tool_call(ctx, call)
        out = await ctx.invoker.call_tool(ToolInvocation(call, tool, arguments, ctx), end)  # type: ignore[union-attr]
        if hooks.after_tool_call:
            await hooks.run_after_tool_call(ctx, call, out)

    for _ in range(300):
        await one()
    return one


async def cpu_us(one: Any, calls: int = 1000) -> float:
    t0 = time.process_time_ns()
    for _ in range(calls):
        await one()
    return (time.process_time_ns() - t0) / 1000 / calls


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    loads: list[float] = []
    print(
        "| call | core only µs | installed, no guardrail configured: µs / the guardrail's own "
        "| installed, guardrail='web': µs / the guardrail's own |"
    )
    print("|---|---:|---:|---:|")
    for (name, (arguments, text)), fresh in (
        (item, fresh) for fresh in (False, True) for item in CALLS.items()
    ):
        name = f"{name}, {'each call new' if fresh else 'repeated'}"
        ones = {v: await make_call(v, arguments, text, fresh) for v in VARIANTS}
        got: dict[str, list[float]] = {v: [] for v in VARIANTS}
        own: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for r in range(args.rounds):
            loads.append(os.getloadavg()[0])
            order = VARIANTS[r % 3 :] + VARIANTS[: r % 3]  # rotated each round
            times = {v: await cpu_us(ones[v]) for v in order}
            for v in VARIANTS:
                got[v].append(times[v])
                own[v].append(times[v] - times["core only"])
        cells = [f"{spread(got[v], '.1f')} / {spread(own[v], '.1f')}" for v in VARIANTS[1:]]
        print(f"| {name} | {spread(got['core only'], '.1f')} | {cells[0]} | {cells[1]} |")
    print(
        f"\nCPU µs per call, median (range) over {args.rounds} interleaved rounds of 1,000 calls; "
        f"load average {min(loads):.1f}–{max(loads):.1f}."
    )


if __name__ == "__main__":
    asyncio.run(main())
