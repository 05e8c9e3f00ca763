"""agentkit-mcp-client: MCP servers' tools, over stdio or streamable HTTP, as agentkit tools.

Importing this package imports nothing of the ``mcp`` SDK; it is loaded when a server is
connected, so ``agentkit plugins list`` stays fast.
"""

from __future__ import annotations

from collections.abc import Awaitable
from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes
from agentkit_core.stores import store_plugin

if TYPE_CHECKING:
    from agentkit_core import PluginManager
    from agentkit_core.plugin import Register
    from agentkit_core.plugin import ToolSourceFactory

    from ._auth import GrantRevoked as GrantRevoked
    from ._auth import HttpServer as HttpServer
    from ._auth import LoginRequired as LoginRequired
    from ._connection import DEFAULT_CALL_TIMEOUT as DEFAULT_CALL_TIMEOUT
    from ._connection import DEFAULT_REQUEST_TIMEOUT as DEFAULT_REQUEST_TIMEOUT
    from ._connection import STDERR_TAIL_BYTES as STDERR_TAIL_BYTES
    from ._connection import ServerParams as ServerParams
    from ._content import to_tool_result as to_tool_result
    from ._features import PROGRESS_ATTRIBUTE as PROGRESS_ATTRIBUTE
    from ._features import SAMPLING_TOOL as SAMPLING_TOOL
    from ._login import login as login
    from ._options import MCPToolSourceOptions as MCPToolSourceOptions
    from ._resources import ResourcePart as ResourcePart
    from ._resources import list_prompts as list_prompts
    from ._resources import render_prompt as render_prompt
    from ._source import MCPServerSource as MCPServerSource
    from ._source import MCPTool as MCPTool
    from ._source import MCPToolSource as MCPToolSource
    from ._tokens import FileTokenStore as FileTokenStore
    from ._tokens import SqliteTokenStore as SqliteTokenStore

#: Public name -> the private module defining it, imported on first access (so loading the
#: plugin, as ``agentkit plugins list`` does, imports none of them).
_LAZY = {
    "GrantRevoked": "._auth",
    "HttpServer": "._auth",
    "LoginRequired": "._auth",
    "login": "._login",
    "DEFAULT_CALL_TIMEOUT": "._connection",
    "DEFAULT_REQUEST_TIMEOUT": "._connection",
    "STDERR_TAIL_BYTES": "._connection",
    "ServerParams": "._connection",
    "PROGRESS_ATTRIBUTE": "._features",
    "SAMPLING_TOOL": "._features",
    "ResourcePart": "._resources",
    "list_prompts": "._resources",
    "render_prompt": "._resources",
    "MCPServerSource": "._source",
    "MCPTool": "._source",
    "MCPToolSource": "._source",
    "to_tool_result": "._content",
    "FileTokenStore": "._tokens",
    "SqliteTokenStore": "._tokens",
}

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_REQUEST_TIMEOUT",
    "PROGRESS_ATTRIBUTE",
    "SAMPLING_TOOL",
    "STDERR_TAIL_BYTES",
    "FileTokenStore",
    "GrantRevoked",
    "HttpServer",
    "LoginRequired",
    "MCPServerSource",
    "MCPTool",
    "MCPToolSource",
    "MCPToolSourceOptions",
    "ResourcePart",
    "ServerParams",
    "SqliteTokenStore",
    "list_prompts",
    "login",
    "render_prompt",
    "to_tool_result",
]


@hookimpl
def agentkit_register_tool_sources(register: Register[ToolSourceFactory]) -> None:
    """Offer ``mcp``: ``factory(servers=[...], **options)`` builds an :class:`MCPToolSource`."""
    register("mcp", _mcp_tool_source, settings=partial(__getattr__, "MCPToolSourceOptions"))


def _mcp_tool_source(
    *args: Any, manager: PluginManager | None = None, **options: Any
) -> MCPToolSource:
    """``MCPToolSource(*args, **options)``, the client modules imported on the first call.

    The lookup passes the kit's ``manager`` (the factory declares it): the source opens its
    OAuth token stores on it.
    """
    from ._source import MCPToolSource

    return MCPToolSource(*args, manager=manager, **options)


def _open_token_store(url: str) -> FileTokenStore | Awaitable[SqliteTokenStore]:
    """``file:///dir`` (one 0600 JSON file per server and user) or ``sqlite:///db``."""
    from ._tokens import open_url

    return open_url(url)


agentkit_register_mcp_token_stores = store_plugin(
    __name__, "mcp_token", schemes=("file", "sqlite"), opener=_open_token_store
).hook


@hookimpl
def agentkit_register_commands(cli: Any) -> None:
    """Add ``agentkit mcp tools`` (and ``mcp serve`` when agentkit-mcp-server is installed)."""
    from ._cli import add_commands

    add_commands(cli)


__getattr__ = lazy_attributes(__name__, {**_LAZY, "MCPToolSourceOptions": "._options"})
