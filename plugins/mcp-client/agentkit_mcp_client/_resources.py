"""A server's resources and prompts: as tools, as an instruction part, as messages.

Resources are offered to the model by two tools per server (``<name>_list_resources`` and
``<name>_read_resource``, ``<name>`` the server's prefix or its announced name), and, for the
resources a product names, as one live instruction part under a byte budget
(:class:`ResourcePart`) that the server's ``notifications/resources/updated`` refresh. A prompt
renders into messages (:func:`render_prompt`).
"""

from __future__ import annotations

import asyncio
import re
import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolResult
from agentkit_core import ToolSourceError
from agentkit_core.plugin import Omission
from agentkit_core.plugin import Rendered

from ._features import uri_texts

if TYPE_CHECKING:
    import mcp_types

    from agentkit_core.plugin import ModelRequest
    from agentkit_core.plugin import PartSource

    from ._connection import Connection
    from ._source import MCPServerSource
    from ._source import MCPToolSource


async def list_resources(connection: Connection) -> list[mcp_types.Resource]:
    """Every resource the server lists (all pages)."""
    resources: list[mcp_types.Resource] = await connection.list_all("resources")
    return resources


async def read_resource(connection: Connection, uri: str) -> str:
    """The resource's contents as text (binary contents named, not inlined)."""
    client = await connection._live()
    result = await connection._request(
        client.read_resource(uri), f"reading resource {uri!r}", connection.request_timeout
    )
    return uri_texts(result.contents)


async def subscribe(connection: Connection, uri: str) -> bool:
    """Ask for ``notifications/resources/updated`` about ``uri``; False where there are none.

    Through the 2025-11-25 handshake's ``resources/subscribe``, which the SDK marks deprecated
    (2026-07-28 servers stream updates through ``subscriptions/listen`` instead, not used yet:
    there the part keeps what it read at start).
    """
    from mcp.shared.exceptions import MCPDeprecationWarning
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    client = await connection._live()
    caps = client.server_capabilities.resources
    if caps is None or not caps.subscribe or client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    with warnings.catch_warnings():  # the SDK warns when the request is awaited
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await connection._request(
            client.subscribe_resource(uri), f"subscribing to {uri!r}", connection.request_timeout
        )
    return True


def server_slug(server: MCPServerSource) -> str:
    """A tool-name prefix for ``server``: its ``prefix=``, else its announced name."""
    if server.prefix:
        return server.prefix
    client = server.connection.client
    info = client.server_info if client is not None else None
    name = (info.name if info is not None else "") or "mcp"
    slug = re.sub(r"[^A-Za-z0-9_]+", "_", name.rpartition("/")[2]).strip("_").lower()
    return f"{slug or 'mcp'}_"


class ListResourcesTool(Tool):
    """``<name>_list_resources``: the server's resources, one ``uri  name: description`` a line."""

    def __init__(self, server: MCPServerSource) -> None:
        super().__init__(
            f"{server_slug(server)}list_resources",
            f"List the resources of the MCP server {server.label} (URI, name, description).",
            {"type": "object", "properties": {}},
            side_effects=False,
        )
        self.server = server

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext | None = None) -> ToolResult:
        listed = await list_resources(self.server.connection)
        lines = [f"{r.uri}  {r.name}: {r.description or ''}".rstrip(": ") for r in listed]
        return ToolResult("\n".join(lines) or "(the server lists no resources)")


class ReadResourceTool(Tool):
    """``<name>_read_resource``: one resource's contents, by URI."""

    def __init__(self, server: MCPServerSource) -> None:
        super().__init__(
            f"{server_slug(server)}read_resource",
            f"Read one resource of the MCP server {server.label} by its URI.",
            {
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "the resource's URI"}},
                "required": ["uri"],
            },
            side_effects=False,
        )
        self.server = server

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext | None = None) -> ToolResult:
        uri = arguments.get("uri")
        if not isinstance(uri, str) or not uri:
            return ToolResult("give the resource's URI as 'uri'", is_error=True)
        try:
            return ToolResult(await read_resource(self.server.connection, uri))
        except ToolSourceError as exc:
            return ToolResult(str(exc), is_error=True)


class ResourcePart:
    """Resources of one server as an instruction part, re-read when the server says they changed.

    A :class:`~agentkit_core.LivePartSource`: the text is each resource's contents under a
    ``## <uri>`` heading, in the order given; what does not fit ``max_bytes`` (or the
    instructions' budget) is left out whole and reported. Start it (:meth:`start`) once the
    server is connected: it reads the resources and subscribes to their updates.
    """

    shrinkable = True
    tools: Sequence[Tool] = ()

    def __init__(
        self,
        server: MCPServerSource,
        uris: Sequence[str],
        *,
        max_bytes: int | None = None,
        id: str = "mcp-resources",
    ) -> None:
        if isinstance(uris, str) or not uris:
            raise ConfigError(
                f"a resource part needs a list of resource URIs; got {uris!r}",
                value=uris,
                source="resource_part(uris=...)",
            )
        if max_bytes is not None and (isinstance(max_bytes, bool) or max_bytes <= 0):
            raise ConfigError(
                f"max_bytes={max_bytes!r} must be a positive number of bytes (or None)",
                value=max_bytes,
                source="resource_part(max_bytes=...)",
            )
        self.server = server
        self.uris = tuple(uris)
        self.max_bytes = max_bytes
        self.id = id
        self.source = server.label
        self.texts: dict[str, str] = {}
        #: Every refresh (a ``resources/updated`` re-read) so far, for tests and traces.
        self.refreshes = 0
        self._lock = asyncio.Lock()

    async def start(self) -> ResourcePart:
        """Read every resource and subscribe to the ones the server can report changes of."""
        for uri in self.uris:
            self.texts[uri] = await read_resource(self.server.connection, uri)
        self.server.connection.features.listeners.append(self._updated)
        for uri in self.uris:
            await subscribe(self.server.connection, uri)
        return self

    async def _updated(self, uri: str) -> None:
        if uri not in self.texts:
            return
        # Read outside the notification handler's task: the SDK delivers the answer there.
        asyncio.get_running_loop().create_task(self._refresh(uri))

    async def _refresh(self, uri: str) -> None:
        async with self._lock:
            try:
                self.texts[uri] = await read_resource(self.server.connection, uri)
            except ToolSourceError:
                return  # the part keeps the last text it read
            self.refreshes += 1

    def render(self, max_bytes: int | None) -> Rendered:
        limits = [b for b in (max_bytes, self.max_bytes) if b is not None]
        budget = min(limits) if limits else None
        kept: list[str] = []
        left: list[Omission] = []
        used = 0
        for uri in self.uris:
            block = f"## {uri}\n{self.texts.get(uri, '')}"
            size = len(block.encode()) + (2 if kept else 0)
            if budget is not None and used + size > budget:
                left.append(Omission(self.id, self.source, uri, "over the byte budget", size))
                continue
            kept.append(block)
            used += size
        return Rendered("\n\n".join(kept), tuple(left))

    async def read(self, ctx: RunContext) -> PartSource:
        return self

    def sent(self, ctx: RunContext, view: PartSource, request: ModelRequest) -> ModelRequest:
        return request


async def list_prompts(source: MCPToolSource, server: str) -> list[mcp_types.Prompt]:
    """Every prompt the server ``server`` (a label) lists."""
    prompts: list[mcp_types.Prompt] = await find_server(source, server).connection.list_all(
        "prompts"
    )
    return prompts


async def render_prompt(
    source: MCPToolSource, server: str, name: str, args: Mapping[str, Any] | None = None
) -> list[Message]:
    """The prompt ``name`` of server ``server`` (a label), rendered with ``args``, as messages.

    What ``Kit.mcp_prompt(server, name, args)`` returns. Arguments are sent as strings (MCP's
    prompt arguments are strings); embedded text resources become text; images stay parts.
    """
    connection = find_server(source, server).connection
    client = await connection._live()
    strings = {str(k): v if isinstance(v, str) else str(v) for k, v in (args or {}).items()}
    result = await connection._request(
        client.get_prompt(name, strings or None),
        f"rendering prompt {name!r}",
        connection.request_timeout,
    )
    from ._content import content_part

    messages = []
    for item in result.messages:
        part = content_part(item.content)
        content: Any = part["text"] if part["type"] == "text" else (part,)
        messages.append(Message(item.role, content))
    return messages


def find_server(source: MCPToolSource, server: str) -> MCPServerSource:
    """The connected server labelled ``server`` (or whose label ends with `` server``)."""
    servers = {s.label: s for s in source.sources()}
    found = servers.get(server) or next(
        (s for label, s in servers.items() if label.endswith(f" {server}")), None
    )
    if found is None:
        raise ConfigError(
            f"no MCP server labelled {server!r}; connected: {', '.join(servers) or 'none'}",
            value=server,
            source="MCP server label",
        )
    return found
