"""The web guardrail's cost per tool call, on the path an agent runs it.

Run: python benchmarks/check_url/bench_tool_call.py [--rounds N]

One tool call: the before_tool_call fold of the plugin's hooks, the invoker's tool chain (the
default middlewares, and the agent's egress() with the guardrail where the agent has one), and
the after_tool_call fold that frames the result. Three calls: tiny (``{"text": "hello"}`` ->
``HELLO``), typical (a URL, headers and a query -> 500 bytes of prose), html (-> 2 KB of
markup). Printed: CPU microseconds per call (best of N rounds of 1,000 calls; CPU time, so a
busy machine inflates it less than wall time), with the guardrail and without it (no hooks, no
egress). The script runs against older trees too (before ``guardrail=`` existed the hooks did
the whole job), which is how the before/after figures in RESULTS.md were taken.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import time
from typing import Any

import agentkit_guardrail_web

from agentkit_core import Hooks
from agentkit_core import PluginConfig
from agentkit_core import PluginManager
from agentkit_core import Tool
from agentkit_core import ToolInvocation
from agentkit_core import ToolResult
from agentkit_core import default_middlewares
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import tool_call

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


async def per_call(guarded: bool, arguments: dict[str, Any], text: str, rounds: int) -> float:
    """CPU microseconds of one guarded (or bare) tool call, best of ``rounds``."""
    middlewares = list(default_middlewares())
    hooks = Hooks()
    options: dict[str, Any] = {}
    if guarded:
        pm = PluginManager(
            entry_points=False, plugins=[agentkit_guardrail_web], config=PluginConfig()
        )
        hooks = Hooks.from_plugins(pm)
        if "guardrail" in inspect.signature(make_test_ctx).parameters:
            from agentkit_core import egress

            guard = agentkit_guardrail_web.WebGuardrail()
            middlewares.append(egress(guard))
            options["guardrail"] = guard
    ctx = make_test_ctx(ScriptedModel([]), middlewares=middlewares, **options)
    assert ctx.invoker is not None
    call, tool, result = tool_call("t", json.dumps(arguments)), Echo("t"), ToolResult(text)

    async def end(invocation: ToolInvocation) -> ToolResult:
        return result

    async def one() -> None:
        await hooks.run_before_tool_call(ctx, call)
        out = await ctx.invoker.call_tool(ToolInvocation(call, tool, arguments, ctx), end)  # type: ignore[union-attr]
        await hooks.run_after_tool_call(ctx, call, out)

    for _ in range(300):
        await one()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time_ns()
        for _ in range(1000):
            await one()
        best = min(best, (time.process_time_ns() - t0) / 1000 / 1000)
    return best


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print("| call | bare µs | with the web guardrail µs | the guardrail's own µs |")
    print("|---|---:|---:|---:|")
    for name, (arguments, text) in CALLS.items():
        bare = await per_call(False, arguments, text, args.rounds)
        guarded = await per_call(True, arguments, text, args.rounds)
        print(f"| {name} | {bare:.1f} | {guarded:.1f} | {guarded - bare:.1f} |")


if __name__ == "__main__":
    asyncio.run(main())
