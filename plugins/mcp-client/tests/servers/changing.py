"""A python SDK server (MCPServer) whose resources change, and which says so, in both eras.

``changing.py stdio`` or ``changing.py http PORT``. Resources ``note://a`` and ``note://b``;
tools ``set_note(uri, text)`` (changes a resource and sends its update) and ``add_note(uri,
text)`` (adds one and sends the list change). A 2026-07-28 client hears through its
``subscriptions/listen`` stream, a 2025-11-25 one through ``notifications/resources/...``
(``resources/subscribe`` is served, so the server offers subscriptions in that era too).
"""

import sys

import mcp_types as t
from mcp.server.mcpserver import Context
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FunctionResource
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

NOTES = {"note://a": "first a", "note://b": "first b"}
server = MCPServer("changing")
subscribed: set[str] = set()


def add(uri: str) -> None:
    server.add_resource(FunctionResource(uri=uri, name=uri, fn=lambda: NOTES[uri]))


async def on_subscribe(ctx, params: t.SubscribeRequestParams) -> t.EmptyResult:
    subscribed.add(str(params.uri))
    return t.EmptyResult()


server._lowlevel_server.add_request_handler(
    "resources/subscribe", t.SubscribeRequestParams, on_subscribe
)


@server.tool()
async def set_note(uri: str, text: str, ctx: Context) -> str:
    """Change a note and tell its subscribers."""
    NOTES[uri] = text
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_resource_updated(uri)
    elif uri in subscribed:
        await ctx.session.send_resource_updated(uri)
    return "set"


@server.tool()
async def add_note(uri: str, text: str, ctx: Context) -> str:
    """Add a note and tell the client the list changed."""
    NOTES[uri] = text
    add(uri)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_resources_changed()
    else:
        await ctx.session.send_resource_list_changed()
    return "added"


for name in list(NOTES):
    add(name)

if sys.argv[1] == "http":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
else:
    server.run("stdio")
