"""A server's resources and prompts: as tools, as an instruction part, as messages.

Resources are offered to the model by two tools per server (``<name>_list_resources`` and
``<name>_read_resource``, ``<name>`` the server's prefix or its announced name), and, for the
resources a product names, as one live instruction part under a byte budget
(:class:`ResourcePart`) that the server's update notifications refresh. A prompt
renders into messages (:func:`render_prompt`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

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
    import mcp
    import mcp_types

    from agentkit_core.plugin import ModelRequest
    from agentkit_core.plugin import PartSource

    from ._connection import Connection


class Server(Protocol):
    """What resources and prompts read of a server: an ``MCPServerSource`` is one.

    Named by what is read, not by the class, so this module sits below the sources that offer
    its tools and parts rather than in a circle with them.
    """

    label: str
    prefix: str
    connection: Connection


class Servers(Protocol):
    """Labelled servers to find one in: an ``MCPToolSource`` is one."""

    def sources(self) -> Sequence[Server]: ...


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


async def subscribe(connection: Connection, client: mcp.Client, uris: Sequence[str]) -> None:
    """Ask for ``notifications/resources/updated`` about ``uris`` (2025-11-25 handshake).

    Through ``resources/subscribe``, where the server offers it; the SDK marks it deprecated
    for 2026-07-28 servers, which stream updates through ``subscriptions/listen`` instead
    (:meth:`ResourcePart._listen`).
    """
    from mcp.shared.exceptions import MCPDeprecationWarning

    caps = client.server_capabilities.resources
    if caps is None or not caps.subscribe:
        return
    for uri in uris:
        with warnings.catch_warnings():  # the SDK warns when the request is awaited
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await connection._request(
                client.subscribe_resource(uri),
                f"subscribing to {uri!r}",
                connection.request_timeout,
            )


def server_slug(server: Server) -> str:
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

    def __init__(self, server: Server) -> None:
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

    def __init__(self, server: Server) -> None:
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
    server is connected: it subscribes to the resources' updates and reads them.

    A ``notifications/resources/updated`` marks its resource stale, a
    ``notifications/resources/list_changed`` every resource (one may be gone or replaced);
    a stale resource is re-read at once in the background, and :meth:`read` (before every
    request) waits for that, so the next request carries the fresh text. Updates come by
    ``resources/subscribe`` (2025-11-25) or a ``subscriptions/listen`` stream (2026-07-28);
    after a reconnect (an HTTP connection dropped) or a lost stream the part subscribes again
    and re-reads everything, as updates in between were not seen.
    """

    shrinkable = True
    tools: Sequence[Tool] = ()

    def __init__(
        self,
        server: Server,
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
        #: Every refresh (a re-read after an update) so far, for tests and traces.
        self.refreshes = 0
        self._stale: set[str] = set()
        self._lock = asyncio.Lock()
        #: The client the subscriptions were made on (a new one needs them made again).
        self._client: mcp.Client | None = None
        self._listening: asyncio.Task[None] | None = None

    async def start(self) -> ResourcePart:
        """Subscribe to the resources' updates, then read every resource."""
        self.server.connection.features.listeners.append(self._notified)
        await self._follow()
        await self._fresh()
        return self

    def _notified(self, uri: str | None) -> None:
        if uri is not None and uri not in self.uris:
            return
        self._stale.update(self.uris if uri is None else (uri,))
        # Read outside the notification handler's task: the SDK delivers the answer there.
        asyncio.get_running_loop().create_task(self._fresh())

    async def _follow(self) -> None:
        """Subscribe when the connection's client is not the one subscribed on."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        client = await self.server.connection._live()
        if client is self._client:
            return
        self._client = client
        self._stale.update(self.uris)
        if self._listening is not None:
            self._listening.cancel()
            self._listening = None
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await subscribe(self.server.connection, client, self.uris)
            return
        acked: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._listening = asyncio.get_running_loop().create_task(self._listen(client, acked))
        await acked

    async def _listen(self, client: mcp.Client, acked: asyncio.Future[None]) -> None:
        """Hold a ``subscriptions/listen`` stream open; its events reach the message handler.

        A server that does not listen leaves the part as it read it at start; a stream lost
        or closed once open has the next request listen again.
        """
        try:
            async with client.listen(
                resources_list_changed=True, resource_subscriptions=self.uris
            ) as stream:
                acked.set_result(None)
                async for _ in stream:
                    pass
        except Exception:  # refused or lost: no updates until the next request listens again
            pass
        finally:
            if not acked.done():
                acked.set_result(None)
            elif self._client is client:
                self._client = None

    async def _fresh(self) -> None:
        """Read every stale resource, one reader at a time.

        At start a failed read is the caller's error; later the part keeps the last text.
        """
        async with self._lock:
            for uri in [u for u in self.uris if u in self._stale]:
                self._stale.discard(uri)
                try:
                    text = await read_resource(self.server.connection, uri)
                except ToolSourceError:
                    if uri not in self.texts:
                        raise
                    continue
                if uri in self.texts:
                    self.refreshes += 1
                self.texts[uri] = text

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
        """The part with its stale resources re-read (a server gone: the last texts)."""
        with contextlib.suppress(ToolSourceError):
            await self._follow()
            await self._fresh()
        return self

    def sent(self, ctx: RunContext, view: PartSource, request: ModelRequest) -> ModelRequest:
        return request


async def list_prompts(source: Servers, server: str) -> list[mcp_types.Prompt]:
    """Every prompt the server ``server`` (a label) lists."""
    prompts: list[mcp_types.Prompt] = await find_server(source, server).connection.list_all(
        "prompts"
    )
    return prompts


async def render_prompt(
    source: Servers, server: str, name: str, args: Mapping[str, Any] | None = None
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


def find_server(source: Servers, server: str) -> Server:
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
