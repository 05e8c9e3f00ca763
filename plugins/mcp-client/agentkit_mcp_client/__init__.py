"""agentkit-mcp-client: MCP servers' tools, over stdio or streamable HTTP, as agentkit tools.

Importing this package imports nothing of the ``mcp`` SDK; it is loaded when a server is
connected, so ``agentkit plugins list`` stays fast.
"""

from __future__ import annotations

from typing import Any

from agentkit_core import hookimpl

from ._connection import DEFAULT_CALL_TIMEOUT
from ._connection import DEFAULT_REQUEST_TIMEOUT
from ._connection import STDERR_TAIL_BYTES
from ._connection import ServerParams
from ._source import MCPServerSource
from ._source import MCPTool
from ._source import MCPToolSource
from ._source import to_tool_result

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_REQUEST_TIMEOUT",
    "STDERR_TAIL_BYTES",
    "MCPServerSource",
    "MCPTool",
    "MCPToolSource",
    "ServerParams",
    "to_tool_result",
]


@hookimpl
def agentkit_register_tool_sources(register: Any) -> None:
    """Offer ``mcp``: ``factory(servers=[...], **options)`` builds an :class:`MCPToolSource`."""
    register("mcp", MCPToolSource)


@hookimpl
def agentkit_register_commands(cli: Any) -> None:
    """Add ``agentkit mcp tools`` (and ``mcp serve`` when agentkit-mcp-server is installed)."""
    from ._cli import add_commands

    add_commands(cli)
