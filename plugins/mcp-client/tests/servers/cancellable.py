"""A real MCP server (python SDK, stdio) whose ``wait`` tool notes being cancelled.

``wait`` reports one progress step, then sleeps; when the client cancels the call
(``notifications/cancelled``), the SDK cancels the handler, which appends ``cancelled`` to
the file named by the CANCEL_MARKER environment variable.
"""

import asyncio
import os

import anyio
import mcp_types as t
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOLS = [t.Tool(name="wait", description="waits a minute", input_schema={"type": "object"})]


async def list_tools(ctx, params):
    return t.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    with open(os.environ["CANCEL_MARKER"], "a") as f:
        f.write("started\n")
    try:
        await asyncio.sleep(60)
    except (asyncio.CancelledError, anyio.get_cancelled_exc_class()):
        with open(os.environ["CANCEL_MARKER"], "a") as f:
            f.write("cancelled\n")
        raise
    return t.CallToolResult(content=[t.TextContent(text="waited")])


async def main():
    server = Server("cancellable", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


asyncio.run(main())
