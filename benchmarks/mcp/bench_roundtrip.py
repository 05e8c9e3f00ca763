"""Round-trip cost of one tool call through agentkit's MCP bridge vs the bare mcp SDK client.

Both talk to the same kind of local stdio server (``echo_server.py``, a tool that returns at
once), over the same negotiated protocol, in one run; rounds alternate between the two so
machine noise hits both alike. Run: ``python benchmarks/mcp/bench_roundtrip.py [calls]``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import mcp
from agentkit_mcp_client import MCPToolSource

SERVER = [sys.executable, str(Path(__file__).with_name("echo_server.py"))]
ROUNDS = 10


async def timed(call, n: int) -> float:
    """Mean seconds per call over ``n`` sequential calls."""
    started = time.perf_counter()
    for _ in range(n):
        await call()
    return (time.perf_counter() - started) / n


async def main(calls: int) -> None:
    params = mcp.StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    async with mcp.Client(params) as bare, MCPToolSource([" ".join(SERVER)]) as source:
        (tool,) = await source.list_tools()
        await bare.list_tools()

        async def sdk_call():
            await bare.call_tool("ping", {})

        async def bridge_call():
            await tool.invoke({}, None)

        per_round = max(calls // ROUNDS, 1)
        await timed(sdk_call, 50)  # warm both paths
        await timed(bridge_call, 50)
        sdk, bridge = [], []
        for _ in range(ROUNDS):
            sdk.append(await timed(sdk_call, per_round))
            bridge.append(await timed(bridge_call, per_round))
        sdk_us, bridge_us = statistics.median(sdk) * 1e6, statistics.median(bridge) * 1e6
        print(
            f"protocol {bare.protocol_version}; {per_round * ROUNDS} calls each, median of {ROUNDS}"
        )
        print(f"bare mcp SDK client : {sdk_us:8.1f} us/call")
        print(f"agentkit bridge     : {bridge_us:8.1f} us/call")
        print(f"ratio bridge/SDK    : {bridge_us / sdk_us:8.3f}x")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
