"""Round-trip cost of one tool call through agentkit's MCP bridge vs the bare mcp SDK client.

Both talk to the same kind of local stdio server (``echo_server.py``, a tool that returns at
once), over the same negotiated protocol, in one run. Each round times both clients, in an
order rotated from round to round, so a slow spell of the shared machine falls on both alike;
the bridge's ratio to the SDK is taken within each round, and RESULTS.md gives the median over
the rounds with the range, and the load average read before and after every round.

    python benchmarks/mcp/bench_roundtrip.py [calls] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import mcp
from agentkit_mcp_client import MCPToolSource

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, str(HERE / "echo_server.py")]
SDK = "bare mcp SDK client"
BRIDGE = "agentkit bridge"
WARM_UP = 50
TARGET = 1.2

TEMPLATE = """# MCP bridge round trip

Measured {when} on {machine}, {cpus} CPUs (shared, other jobs running: load average
{load} over the rounds), Python {python}, mcp {mcp_version}, protocol {protocol}, by
`{command}`.

`bench_roundtrip.py` times one `tools/call` to a local stdio server whose tool returns at once
(`echo_server.py`, the python SDK's low-level `Server`), through agentkit's bridge
(`MCPTool.invoke`: owner-task connection, in-flight tracking, result conversion to a
`ToolResult`) beside the bare `mcp.Client.call_tool` on its own connection to the same kind of
server, in one process and one run. After {warm_up} warm-up calls each, {rounds} interleaved
rounds (the order of the two rotated each round) each time {per_round} sequential calls per
client; a figure is the median over the rounds of a round's mean per call, with the range in
brackets, and the ratio is taken within each round.

| client | µs/call | × bare SDK |
|---|---:|---:|
{rows}

Target: within {target}x of the bare SDK — {verdict} ({ratio:.3f}x at the median). The
bridge's own cost is one task per call (so `aclose()` can end calls in flight with a clear
error) and building the `ToolResult`; the rest is the SDK's JSON-RPC over the pipes. Installed
plugins cannot change these figures: `MCPTool.invoke` consults no hook and no plugin manager
(in an agent, the tool-call hooks around it are the agent loop's cost, measured in
`benchmarks/agent_loop`). Run it with:

```
{command}
```
"""


async def timed(call: Callable[[], Awaitable[object]], n: int) -> float:
    """Mean seconds per call over ``n`` sequential calls."""
    started = time.perf_counter()
    for _ in range(n):
        await call()
    return (time.perf_counter() - started) / n


async def measure(per_round: int, rounds: int) -> tuple[dict[str, list[float]], list[float], str]:
    """Seconds per call of each client in each round, the load averages, the protocol."""
    params = mcp.StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    async with mcp.Client(params) as bare, MCPToolSource([" ".join(SERVER)]) as source:
        (tool,) = await source.list_tools()
        await bare.list_tools()

        async def sdk_call() -> None:
            await bare.call_tool("ping", {})

        async def bridge_call() -> None:
            await tool.invoke({}, None)

        calls = {SDK: sdk_call, BRIDGE: bridge_call}
        for call in calls.values():
            await timed(call, WARM_UP)
        names = list(calls)
        times: dict[str, list[float]] = {name: [] for name in names}
        loads: list[float] = []
        for r in range(rounds):
            loads.append(os.getloadavg()[0])
            for name in names[r % len(names) :] + names[: r % len(names)]:
                times[name].append(await timed(calls[name], per_round))
            loads.append(os.getloadavg()[0])
            done = ", ".join(f"{name} {t[-1] * 1e6:,.1f} µs" for name, t in times.items())
            print(f"round {r + 1}: {done}", file=sys.stderr)
        return times, loads, bare.protocol_version


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", nargs="?", type=int, default=2000, help="calls per client")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    per_round = max(args.calls // args.rounds, 1)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    times, loads, protocol = asyncio.run(measure(per_round, args.rounds))
    ratios = [b / s for b, s in zip(times[BRIDGE], times[SDK], strict=True)]  # same round
    us = {name: [t * 1e6 for t in values] for name, values in times.items()}
    ratio = statistics.median(ratios)
    text = TEMPLATE.format(
        when=started,
        machine=platform.machine(),
        cpus=os.cpu_count(),
        load=f"{min(loads):.1f}–{max(loads):.1f}",
        python=platform.python_version(),
        mcp_version=version("mcp"),
        protocol=protocol,
        command=f"python benchmarks/mcp/bench_roundtrip.py {args.calls} --rounds {args.rounds}",
        warm_up=WARM_UP,
        rounds=args.rounds,
        per_round=per_round,
        rows=f"| {SDK} | {spread(us[SDK], ',.1f')} | 1x |\n"
        f"| {BRIDGE} | {spread(us[BRIDGE], ',.1f')} | **{spread(ratios, '.3f')}x** |",
        target=TARGET,
        verdict="met" if ratio <= TARGET else "MISSED",
        ratio=ratio,
    )
    (HERE / "RESULTS.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
