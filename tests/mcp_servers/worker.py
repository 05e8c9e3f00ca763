"""A real MCP server (python SDK, stdio) for the kit's run-time tests.

Tools: ``echo`` (returns its text) and ``sleep`` (waits ``seconds``). Options:
``--start-delay S`` waits before answering the handshake (a slow dial); ``--touch F`` creates
the file F and ``--wait-for F`` waits for the file F before answering (two servers that each
wait for the other connect only when they are dialed at once); ``--linger`` keeps the process
alive after its input closes, ignoring SIGTERM (a server that fails to close).
"""

import argparse
import asyncio
import signal
import sys
import time
from pathlib import Path

import mcp_types as t
from mcp.server import Server
from mcp.server.stdio import stdio_server

OBJ = {"type": "object"}
TOOLS = [
    t.Tool(
        name="echo",
        description="Echo a text.",
        input_schema={**OBJ, "properties": {"text": {"type": "string"}}},
    ),
    t.Tool(
        name="sleep",
        description="Wait.",
        input_schema={**OBJ, "properties": {"seconds": {"type": "number"}}},
    ),
]


async def list_tools(ctx, params):
    return t.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    args = params.arguments or {}
    if params.name == "echo":
        return t.CallToolResult(content=[t.TextContent(text=str(args.get("text", "")))])
    if params.name == "sleep":
        await asyncio.sleep(float(args.get("seconds", 60)))
        return t.CallToolResult(content=[t.TextContent(text="slept")])
    return t.CallToolResult(content=[t.TextContent(text=f"no tool {params.name}")], is_error=True)


async def main(options):
    if options.start_delay:
        await asyncio.sleep(options.start_delay)
    if options.touch:
        Path(options.touch).touch()
    while options.wait_for and not Path(options.wait_for).exists():
        await asyncio.sleep(0.05)
    print("worker up", file=sys.stderr, flush=True)
    server = Server("worker", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


parser = argparse.ArgumentParser()
parser.add_argument("--start-delay", type=float, default=0.0)
parser.add_argument("--linger", action="store_true")
parser.add_argument("--touch")
parser.add_argument("--wait-for")
options = parser.parse_args()
if options.linger:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
asyncio.run(main(options))
if options.linger:
    print("worker: my input closed, but I linger", file=sys.stderr, flush=True)
    time.sleep(600)
