"""A stdio MCP server (python SDK, low-level) whose one tool returns at once."""

import asyncio

import mcp_types as t
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOL = t.Tool(name="ping", description="returns at once", input_schema={"type": "object"})


async def list_tools(ctx, params):
    return t.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params):
    return t.CallToolResult(content=[t.TextContent(text="pong")])


async def main():
    server = Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


asyncio.run(main())
