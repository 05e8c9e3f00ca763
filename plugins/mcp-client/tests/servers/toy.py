"""A small real MCP server (python SDK, stdio) with tools that misbehave on request.

Tools: echo, sleep (seconds), die (writes to stderr, exits mid-call), fail (a tool error),
picture (an image), ask (elicits a name, in either protocol era).
"""

import asyncio
import os
import sys

import mcp_types as t
from mcp.server import Server
from mcp.server.stdio import stdio_server

PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
OBJ = {"type": "object"}


def tool(name, props=None):
    return t.Tool(
        name=name, description=f"the {name} tool", input_schema={**OBJ, "properties": props or {}}
    )


TOOLS = [
    tool("echo", {"text": {"type": "string"}}),
    tool("sleep", {"seconds": {"type": "number"}}),
    tool("die"),
    tool("fail"),
    tool("picture"),
    tool("ask"),
]
ASK_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def text(value, **kw):
    return t.CallToolResult(content=[t.TextContent(text=value)], **kw)


async def list_tools(ctx, params):
    return t.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    args = params.arguments or {}
    if params.name == "echo":
        return t.CallToolResult(
            content=[t.TextContent(text=args.get("text", ""))],
            structured_content={"echoed": args.get("text", "")},
        )
    if params.name == "sleep":
        await asyncio.sleep(float(args.get("seconds", 60)))
        return text("slept")
    if params.name == "die":
        print("toy: dying on purpose mid-call", file=sys.stderr, flush=True)
        os._exit(7)
    if params.name == "fail":
        return text("this tool always fails", is_error=True)
    if params.name == "picture":
        return t.CallToolResult(
            content=[
                t.TextContent(text="a pixel"),
                t.ImageContent(data=PIXEL, mime_type="image/png"),
            ]
        )
    if params.name == "ask":
        question = "What is your name?"
        if ctx.protocol_version >= "2026":
            if params.input_responses and "q" in params.input_responses:
                answer = params.input_responses["q"]
            else:
                form = t.ElicitRequestFormParams(message=question, requested_schema=ASK_SCHEMA)
                return t.InputRequiredResult(input_requests={"q": t.ElicitRequest(params=form)})
        else:
            answer = await ctx.session.elicit_form(question, ASK_SCHEMA)
        name = (answer.content or {}).get("name")
        return text(f"{ctx.protocol_version} {answer.action} {name}")
    return text(f"unknown tool {params.name}", is_error=True)


async def main():
    print("toy server up", file=sys.stderr, flush=True)
    server = Server("toy", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


asyncio.run(main())
