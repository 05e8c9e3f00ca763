"""``agentkit mcp``: this plugin owns the ``mcp`` command and adds ``tools`` to it.

agentkit-mcp-server contributes ``serve`` through ``agentkit_mcp_server.add_serve_command``;
when this plugin is installed it adds that subcommand here, and when it is not the server
plugin registers ``mcp`` itself, so either plugin alone or both together work.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from typing import Any


def add_commands(cli: Any) -> None:
    mcp = cli.add_parser("mcp", help="connect to MCP servers, or serve tools over MCP")
    sub = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True)
    tools = sub.add_parser("tools", help="connect to an MCP server and print its tools as JSON")
    tools.add_argument("server", help="a command line (split on whitespace) or an http(s) URL")
    tools.add_argument(
        "--timeout", type=float, default=30.0, help="seconds to wait for the server (30)"
    )
    tools.set_defaults(func=_tools_command)
    login = sub.add_parser(
        "login",
        help="log in to an OAuth-protected MCP server and keep the grant in a token store",
        description="Runs OAuth 2.1 (authorization code with PKCE, dynamic client registration "
        "when the server offers it): prints the authorization URL, receives the code on a "
        "listener on 127.0.0.1, and stores the grant under (URL, user). Servers configured "
        "with auth='oauth' and the same store and user then connect without asking.",
    )
    login.add_argument("url", help="the server's streamable HTTP URL")
    login.add_argument("--user", default="default", help="whose grant this is (default)")
    login.add_argument(
        "--store",
        default=None,
        help="the token store URL (default: $AGENTKIT_MCP_TOKEN_STORE, else "
        "file://~/.agentkit/mcp-tokens)",
    )
    login.add_argument("--scope", default=None, help="the scopes to ask for (space-separated)")
    login.set_defaults(func=_login_command)
    if importlib.util.find_spec("agentkit_mcp_server") is not None:
        from agentkit_mcp_server import add_serve_command

        add_serve_command(sub)


def _tools_command(args: argparse.Namespace) -> int:
    import asyncio

    print(json.dumps(asyncio.run(list_server_tools(args.server, args.timeout)), indent=2))
    return 0


def _login_command(args: argparse.Namespace) -> int:
    import asyncio

    from ._auth import default_token_store
    from ._login import login

    store = args.store or default_token_store()
    manager = args.plugin_manager
    asyncio.run(login(args.url, user=args.user, store=store, scope=args.scope, manager=manager))
    print(f"logged in to {args.url} as {args.user!r}; the grant is in {store}")
    return 0


async def list_server_tools(server: str, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Each tool of one server as ``{name, label, description, input_schema}``."""
    from ._source import MCPToolSource

    async with MCPToolSource([server], connect_timeout=timeout, stderr=sys.stderr) as source:
        (server_source,) = source.sources()
        return [
            {
                "name": tool.name,
                "label": server_source.label,
                "description": tool.description,
                "input_schema": tool.parameters,
            }
            for tool in await server_source.list_tools()
        ]
