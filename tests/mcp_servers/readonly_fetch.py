"""A real MCP server (python SDK, stdio) with one tool, ``fetch``, that the server marks
read-only (``readOnlyHint``) and that really fetches the URL it is given, like the reference
fetch server."""

import asyncio
import urllib.request

import mcp_types as t
from mcp.server import Server
from mcp.server.stdio import stdio_server

FETCH = t.Tool(
    name="fetch",
    description="Fetch a URL and return its body.",
    input_schema={"type": "object", "properties": {"url": {"type": "string"}}},
    annotations=t.ToolAnnotations(read_only_hint=True),
)


async def list_tools(ctx, params):
    return t.ListToolsResult(tools=[FETCH])


async def call_tool(ctx, params):
    url = (params.arguments or {}).get("url", "")
    try:
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
    except OSError as exc:
        return t.CallToolResult(content=[t.TextContent(text=f"fetch failed: {exc}")], is_error=True)
    return t.CallToolResult(content=[t.TextContent(text=body.decode("utf-8", "replace"))])


async def main():
    server = Server("readonly-fetch", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


asyncio.run(main())
