"""MCP servers as agentkit tool sources: each server a labelled source, the bridge their union."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
import warnings
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolResult
from agentkit_core import ToolSourceError
from agentkit_core.plugin import Elicitor
from agentkit_core.plugin import ToolConflict
from agentkit_core.plugin import ToolConflictError
from agentkit_core.plugin import current_span

from ._connection import DEFAULT_REQUEST_TIMEOUT
from ._connection import Connection
from ._connection import ServerParams
from ._connection import ServerSpec
from ._connection import StderrSink
from ._connection import describe
from ._connection import parse_spec
from ._content import to_tool_result
from ._features import ClientFeatures
from ._features import check_roots
from ._features import progress_recorder

if TYPE_CHECKING:
    import mcp_types

    from agentkit_core import PluginManager

    from ._resources import ResourcePart

#: Which of a server's tools to offer: names to keep, or a predicate on the server's tool name.
ToolFilter = Iterable[str] | Callable[[str], bool] | None

DEFAULT_CONNECT_TIMEOUT = 30.0

#: What a server's tool name may be (MCP 2025-11-25): a tool listed under any other is not
#: offered, since providers refuse such a name and a look-alike (fullwidth, zero-width,
#: another script's letters, control characters) would sit beside the tool it imitates.
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


class MCPTool(Tool):
    """One tool of an MCP server; calling it sends ``tools/call`` to that server."""

    def __init__(self, server: MCPServerSource, listed: mcp_types.Tool, name: str) -> None:
        hints = listed.annotations
        read_only = bool(hints is not None and hints.read_only_hint)
        super().__init__(
            name,
            listed.description or "",
            dict(listed.input_schema),
            side_effects=not read_only,
            timeout=server.call_timeout,
        )
        self.server = server
        self.remote_name = listed.name

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext | None = None) -> ToolResult:
        """Call the tool on its server; a server-side tool error comes back as ``is_error``.

        While it runs, the server may sample through ``ctx``'s model; its progress
        notifications are recorded on the tool call's span (``mcp_progress``) and are the
        run's ``tool_progress`` events.
        """
        try:
            json.dumps(arguments, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # the SDK's writer would fail and end a stdio connection
            return ToolResult.error(
                f"{self.name}: the arguments hold a lone surrogate (text that is not valid "
                "Unicode, such as '\\ud800'), which JSON cannot carry; nothing was sent to "
                "the server"
            )
        connection = self.server.connection
        progress = progress_recorder(current_span(), ctx)
        with connection.features.running(ctx):
            result = await connection.call_tool(self.remote_name, arguments, self.timeout, progress)
        return to_tool_result(result)


class MCPServerSource:
    """One connected MCP server as a tool source with its own label."""

    def __init__(
        self,
        connection: Connection,
        *,
        tool_filter: ToolFilter = None,
        prefix: str = "",
        resource_tools: bool = False,
    ) -> None:
        self.connection = connection
        self.resource_tools = resource_tools
        self._resource_tools: list[Tool] | None = None
        self.label = connection.label
        self.call_timeout = connection.call_timeout
        self.prefix = prefix
        if tool_filter is None or callable(tool_filter):
            self._keep: Callable[[str], bool] | None = tool_filter
        else:
            names = frozenset([tool_filter] if isinstance(tool_filter, str) else tool_filter)
            self._keep = names.__contains__
        self._cache: dict[tuple[str, str], MCPTool] = {}
        self._refused: set[str] = set()

    async def list_tools(self) -> list[Tool]:
        """The server's tools now, filtered and prefixed; an unchanged tool keeps its object."""
        tools: list[Tool] = []
        seen: dict[str, int] = {}
        for listed in await self.connection.list_tools():
            if self._keep is not None and not self._keep(listed.name):
                continue
            if not TOOL_NAME.fullmatch(listed.name):
                self._refuse(listed.name)
                continue
            seen[listed.name] = seen.get(listed.name, 0) + 1
            if seen[listed.name] > 1:  # a call names the tool, so one entry per name
                continue
            key = (listed.name, listed.model_dump_json())
            tool = self._cache.get(key)
            if tool is None:
                tool = self._cache[key] = MCPTool(self, listed, self.prefix + listed.name)
            tools.append(tool)
        for name, count in seen.items():
            if count > 1:
                self._repeated(name, count)
        return tools + self._resources_as_tools()

    def _repeated(self, name: str, count: int) -> None:
        """Warn, once per name, that the server lists a tool name more than once."""
        if name in self._refused:
            return
        self._refused.add(name)
        warnings.warn(
            f"{self.label}: the server lists the tool {name!r} {count} times; only the first "
            "is offered (its description and schema)",
            UserWarning,
            stacklevel=3,
        )

    def _refuse(self, name: str) -> None:
        """Warn, once per name, that a tool listed under a name MCP does not allow is left out."""
        if name in self._refused:
            return
        self._refused.add(name)
        shown = repr(name) if len(name) <= 80 else repr(name[:80]) + "..."
        warnings.warn(
            f"{self.label}: the server's tool {shown} is not offered: an MCP tool name is 1 to "
            "128 of A-Z a-z 0-9 _ - . (a model provider refuses a request listing any other, "
            "and a look-alike of another tool's name would be offered beside it)",
            UserWarning,
            stacklevel=2,
        )

    def _resources_as_tools(self) -> list[Tool]:
        """``<name>_list_resources`` and ``<name>_read_resource``, when asked for and offered."""
        client = self.connection.client
        if not self.resource_tools or client is None:
            return []
        if client.server_capabilities.resources is None:
            return []
        if self._resource_tools is None:
            from ._resources import ListResourcesTool
            from ._resources import ReadResourceTool

            self._resource_tools = [ListResourcesTool(self), ReadResourceTool(self)]
        return list(self._resource_tools)

    async def aclose(self) -> None:
        """Close the server connection (idempotent)."""
        await self.connection.aclose()

    def __repr__(self) -> str:
        return f"<MCPServerSource {self.label!r}>"


def _seconds(option: str, value: Any) -> float:
    """A deadline option: a positive, finite number of seconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ConfigError(
            f"{option}={value!r} must be a positive number of seconds",
            value=value,
            source=f"MCPToolSource({option}=...)",
        )
    return float(value)


class MCPToolSource:
    """The tools of several MCP servers, added and removed at run time.

    Servers are command lines (``"mcp-server-time --local-timezone UTC"``, split on
    whitespace), :class:`ServerParams`, mappings with ``program``/``args``/``env``/``cwd``, or
    ``http(s)://`` URLs (streamable HTTP). ``protocol`` is the SDK's mode: ``"auto"`` tries the
    2026-07-28 protocol and falls back to the 2025-11-25 handshake, ``"legacy"`` forces the
    handshake. Each is labelled ``mcp:#<n> <program>`` (or the URL's
    scheme and host). Use ``async with`` or :meth:`start` then :meth:`aclose`.

    Every request has a deadline: ``request_timeout`` (60 s) for listing and the like,
    ``call_timeout`` for a tool call — each ``MCPTool.timeout``; None leaves the agent's
    ``tool_timeout`` in charge, and the call still ends on the wire at 300 s
    (``DEFAULT_CALL_TIMEOUT``).

    ``sampling`` (default True; per server in :meth:`add`) lets a server's
    ``sampling/createMessage`` be answered by the model of the run whose tool call it serves,
    as the run's policy decides (see ``_features``); False announces no sampling capability.
    ``roots`` are the workspace directories announced to servers that ask (none by default).
    ``resource_tools`` offers each server's resources as two tools. ``manager`` is the plugin
    manager an OAuth server's token store named by URL is opened on: a kit passes its own;
    without one, only this plugin's ``file://`` and ``sqlite://`` stores open.
    """

    label = "mcp"

    def __init__(
        self,
        servers: Iterable[ServerSpec | Mapping[str, Any]] = (),
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        elicitor: Elicitor | None = None,
        stderr: StderrSink = None,
        tool_filter: ToolFilter = None,
        prefix: str = "",
        protocol: str = "auto",
        sampling: bool = True,
        roots: Any = None,
        resource_tools: bool = False,
        manager: PluginManager | None = None,
    ) -> None:
        if isinstance(servers, (str, Mapping)):
            servers = [servers]
        self._pending = [parse_spec(s) for s in servers]
        self.connect_timeout = _seconds("connect_timeout", connect_timeout)
        self.call_timeout = None if call_timeout is None else _seconds("call_timeout", call_timeout)
        self.request_timeout = _seconds("request_timeout", request_timeout)
        self.elicitor = elicitor
        self.stderr = stderr
        self.protocol = protocol
        self.roots = check_roots(roots)
        self.manager = manager
        self._defaults: dict[str, Any] = {
            "tool_filter": tool_filter,
            "prefix": prefix,
            "sampling": sampling,
            "resource_tools": resource_tools,
        }
        self._servers: dict[str, MCPServerSource] = {}
        self._numbers = itertools.count(1)
        self._started = False
        self._closed = False

    async def start(self) -> MCPToolSource:
        """Connect the servers given at construction; if one fails, close those connected."""
        if self._started:
            return self
        self._started = True
        try:
            for spec in self._pending:
                await self.add(spec, **self._defaults)
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aenter__(self) -> MCPToolSource:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def add(
        self,
        server: ServerSpec | Mapping[str, Any],
        *,
        tool_filter: ToolFilter = None,
        prefix: str = "",
        env: Mapping[str, str] | None = None,
        sampling: bool | None = None,
        resource_tools: bool | None = None,
    ) -> str:
        """Connect one more server, offered from the next listing on; returns its label.

        ``sampling`` and ``resource_tools`` default to the source's.
        """
        if self._closed:
            raise ToolSourceError("this MCP tool source is closed; create a new one")
        spec = parse_spec(server)
        if env is not None and isinstance(spec, ServerParams):
            spec = type(spec)(spec.program, spec.args, {**(spec.env or {}), **env}, spec.cwd)
        label = f"mcp:#{next(self._numbers)} {describe(spec)}"
        connection = Connection(
            spec,
            label,
            connect_timeout=self.connect_timeout,
            call_timeout=self.call_timeout,
            elicitor=self.elicitor,
            stderr=self.stderr,
            protocol=self.protocol,
            request_timeout=self.request_timeout,
            features=ClientFeatures(
                label,
                sampling=self._defaults["sampling"] if sampling is None else sampling,
                roots=self.roots,
            ),
            manager=self.manager,
        )
        await connection.open()
        self._servers[label] = MCPServerSource(
            connection,
            tool_filter=tool_filter,
            prefix=prefix,
            resource_tools=self._defaults["resource_tools"]
            if resource_tools is None
            else resource_tools,
        )
        return label

    async def remove(self, label: str) -> None:
        """Close one server; its tools are no longer offered."""
        source = self._servers.pop(label, None)
        if source is None:
            raise ConfigError(
                f"no MCP server labelled {label!r}; "
                f"connected: {', '.join(self._servers) or 'none'}",
                value=label,
                source="remove()",
            )
        await source.aclose()

    @property
    def labels(self) -> list[str]:
        """The connected servers' labels, in the order they were added."""
        return list(self._servers)

    def sources(self) -> list[MCPServerSource]:
        """Each server as its own labelled source, for a :class:`~agentkit_core.ToolUnion`."""
        return list(self._servers.values())

    async def list_tools(self) -> list[Tool]:
        """Every server's tools; two servers offering one name is a conflict naming both.

        A server removed while the listing runs drops out of it, tools already listed
        included; the other servers' tools stand.
        """
        if self._closed:
            raise ToolSourceError("this MCP tool source is closed; create a new one")
        if not self._started:
            await self.start()
        listed: list[tuple[MCPServerSource, list[Tool]]] = []
        for server in list(self._servers.values()):
            try:
                listed.append((server, await server.list_tools()))
            except ToolSourceError:
                if self._connected(server):
                    raise
        if self._closed:
            raise ToolSourceError("this MCP tool source was closed while listing tools")
        tools: list[Tool] = []
        taken: dict[str, str] = {}
        for server, found in listed:
            if not self._connected(server):
                continue
            for tool in found:
                if tool.name in taken:
                    raise ToolConflictError(ToolConflict(tool.name, taken[tool.name], server.label))
                taken[tool.name] = server.label
                tools.append(tool)
        return tools

    def _connected(self, server: MCPServerSource) -> bool:
        """Whether ``server`` is still one of this source's (``remove`` drops it first)."""
        return self._servers.get(server.label) is server

    async def resource_part(
        self,
        server: str,
        uris: Iterable[str],
        *,
        max_bytes: int | None = None,
        id: str = "mcp-resources",
    ) -> ResourcePart:
        """Resources of ``server`` (a label) as a live instruction part, read and subscribed."""
        from ._resources import ResourcePart
        from ._resources import find_server

        part = ResourcePart(find_server(self, server), list(uris), max_bytes=max_bytes, id=id)
        return await part.start()

    async def render_prompt(
        self, server: str, name: str, args: Mapping[str, Any] | None = None
    ) -> list[Message]:
        """The prompt ``name`` of ``server`` (a label) rendered as messages (``Kit.mcp_prompt``)."""
        from ._resources import render_prompt

        return await render_prompt(self, server, name, args)

    async def aclose(self) -> None:
        """Close every server at once: calls in flight end with an error; no process is left."""
        self._closed = True
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(s.aclose() for s in servers), return_exceptions=True)
