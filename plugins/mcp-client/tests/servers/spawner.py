"""A well-behaved MCP server (python SDK, stdio) that starts a helper process of its own.

The helper stays in the server's process group and outlives it unless the group is ended:
the server itself exits as soon as its stdin closes. argv[1] marks the helper's command line.
"""

import asyncio
import subprocess
import sys

import mcp_types as t
from mcp.server import Server
from mcp.server.stdio import stdio_server

marker = sys.argv[1]
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
print(f"spawner: helper {helper.pid} started", file=sys.stderr, flush=True)


async def list_tools(ctx, params):
    schema = {"type": "object", "properties": {}}
    return t.ListToolsResult(
        tools=[t.Tool(name="noop", description="nothing", input_schema=schema)]
    )


async def call_tool(ctx, params):
    return t.CallToolResult(content=[t.TextContent(text="done")])


async def main():
    server = Server("spawner", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


asyncio.run(main())
