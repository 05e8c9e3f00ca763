"""agentkit-mcp-server: serve agentkit tools, or an agent as one tool, as an MCP server.

Nothing of the ``mcp`` SDK is imported until a server is built.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

from ._defaults import DEFAULT_PORT

if TYPE_CHECKING:
    import argparse

    from ._auth import BearerTokens as BearerTokens
    from ._features import ServedPrompt as ServedPrompt
    from ._features import ServedResource as ServedResource
    from ._features import kit_resources as kit_resources
    from ._features import log as log
    from ._features import report_progress as report_progress
    from ._serve import as_tools as as_tools
    from ._serve import build_server as build_server
    from ._serve import load_tools as load_tools
    from ._serve import serve_tools as serve_tools

#: Public name -> the private module defining it, imported on first access (so loading the
#: plugin, as ``agentkit plugins list`` does, imports none of them).
_LAZY = {
    "BearerTokens": "._auth",
    "ServedPrompt": "._features",
    "ServedResource": "._features",
    "kit_resources": "._features",
    "log": "._features",
    "report_progress": "._features",
    "as_tools": "._serve",
    "build_server": "._serve",
    "load_tools": "._serve",
    "serve_tools": "._serve",
}

__all__ = [
    "DEFAULT_PORT",
    "BearerTokens",
    "ServedPrompt",
    "ServedResource",
    "add_serve_command",
    "as_tools",
    "build_server",
    "kit_resources",
    "load_tools",
    "log",
    "report_progress",
    "serve_tools",
]


def add_serve_command(mcp_subparsers: Any) -> None:
    """Add ``serve`` under ``agentkit mcp`` (whichever MCP plugin owns the ``mcp`` parser)."""
    serve = mcp_subparsers.add_parser("serve", help="serve agentkit tools as an MCP server")
    serve.add_argument(
        "--tools", required=True, metavar="MODULE:ATTR", help="a Tool, an agent or a list of them"
    )
    serve.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP host (127.0.0.1)")
    serve.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"HTTP port ({DEFAULT_PORT}; 0 picks a free one)",
    )
    serve.add_argument("--name", default="agentkit", help="the server name clients see")
    serve.add_argument(
        "--token-env",
        metavar="NAME",
        help="HTTP: require 'Authorization: Bearer <token>', the token read from $NAME",
    )
    serve.set_defaults(func=_serve_command)


def _serve_command(args: argparse.Namespace) -> int:
    import asyncio

    from ._serve import load_tools
    from ._serve import serve_tools

    tools = load_tools(args.tools)
    verifier = None
    if args.token_env:
        from ._auth import BearerTokens

        verifier = BearerTokens.from_env(args.token_env)
    transport: Literal["stdio", "http"] = "http" if args.http else "stdio"
    try:
        asyncio.run(
            serve_tools(
                tools,
                transport=transport,
                host=args.host,
                port=args.port,
                name=args.name,
                on_listening=_say_where,
                token_verifier=verifier,
            )
        )
    except KeyboardInterrupt:
        pass
    return 0


def _say_where(url: str) -> None:
    print(f"agentkit mcp serve: listening on {url} (Ctrl-C stops it)", flush=True)


@hookimpl
def agentkit_register_commands(cli: Any) -> None:
    """Add ``agentkit mcp serve``; agentkit-mcp-client, when installed, owns ``mcp`` and adds it."""
    if importlib.util.find_spec("agentkit_mcp_client") is not None:
        return
    mcp = cli.add_parser("mcp", help="serve agentkit tools over MCP")
    sub = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True)
    add_serve_command(sub)


__getattr__ = lazy_attributes(__name__, _LAZY)
