"""What a Kit opens and closes: tool sources, MCP servers (added at run time too), its store.

:class:`KitLifecycle` holds that state and the methods on it; :class:`~agentkit_core.Kit`
inherits it, so construction (which fills it) and the lifecycle read as one kit.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ConfigError
from ._errors import ToolSourceError
from ._lookup import get_tool_source
from ._memory_block import MemoryBlock
from ._memory_ground import MemoryGrounder
from ._messages import Message
from ._plugins import PluginManager
from ._recorder import NULL_RECORDER
from ._recorder import Recorder
from ._toolunion import CompositeToolSource
from ._toolunion import ToolSourceBridge
from ._toolunion import ToolUnion

#: The tool source the kit adds MCP servers to (``mcp=``, ``add_mcp``).
MCP = "mcp"


@dataclass(eq=False)
class Opened:
    """One thing the kit opened: a source or store it closes, or one part of a bridge."""

    name: str
    holder: Any
    #: The label of the bridge's part this is (closed by ``holder.remove(part)``), or "".
    part: str = ""

    async def close(self) -> None:
        if not self.part:
            await self.holder.aclose()
        elif any(p.label == self.part for p in self.holder.sources()):
            await self.holder.remove(self.part)


def _failures(results: Iterable[Any]) -> list[Exception]:
    """The errors among ``gather(..., return_exceptions=True)`` results.

    A cancellation is raised, not collected.
    """
    errors = []
    for result in results:
        if isinstance(result, Exception):
            errors.append(result)
        elif isinstance(result, BaseException):
            raise result
    return errors


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled (not something it waited on)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if cancelling is not None else False


class KitLifecycle:
    """What the kit opened, in order, and how it adds, removes and closes it."""

    #: Set by the kit's construction: the manager the sources are made on, and the options of
    #: the tool sources it connects (the MCP bridge's, for :meth:`add_mcp`).
    _manager: PluginManager
    _pending_sources: dict[str, dict[str, Any]]

    def _start_lifecycle(self) -> None:
        #: What the kit opened, in the order it connected: closed concurrently, newest first.
        self._opened: list[Opened] = []
        #: What holds opened parts (a bridge): closed after them.
        self._containers: list[Any] = []
        #: add_mcp dials in flight, cancelled by a close.
        self._dials: set[asyncio.Future[str]] = set()
        self._mcp: ToolSourceBridge | None = None
        self._mcp_lock = asyncio.Lock()
        self._closed = False
        self._memory: MemoryBlock | None = None
        self._grounder: MemoryGrounder | None = None
        self._union = ToolUnion([])  # until construction builds the kit's own
        self._recorder: Recorder = NULL_RECORDER  # aclose() flushes it, even after a failed _setup

    async def _make_source(self, name: str, options: Mapping[str, Any]) -> list[Any]:
        """The tool sources the plugin ``name`` makes, tracked to be closed with the kit."""
        made = get_tool_source(name, manager=self._manager, **options)
        if inspect.isawaitable(made):
            made = await made
        sources = list(made) if isinstance(made, list | tuple) else [made]
        for source in sources:
            if isinstance(source, ToolSourceBridge):
                self._containers.append(source)
                if name == MCP and self._mcp is None:
                    self._mcp = source
            else:
                self._opened.append(Opened(getattr(source, "label", name), source))
        return sources

    # ------------------------------------------------------------------ MCP servers at run time

    async def add_mcp(self, server: str | Mapping[str, Any], **options: Any) -> str:
        """Connect one more MCP server; its tools are offered from the next turn on.

        ``server`` is a command line, an ``http(s)://`` URL or a mapping, as in ``mcp=``;
        ``options`` are the bridge's per-server options (``prefix=``, ``tool_filter=``,
        ``env=`` with agentkit-mcp-client). Every run off the kit's configs, those handed out
        already included, is offered the server's tools from its next turn; a turn under way
        keeps the tools it was offered. Returns the server's label (``mcp:#<n> <program>``),
        which :meth:`remove_mcp`, ``tool_filter`` and :meth:`tools` use.

        The dial runs beside everything else (two servers added at once dial at once). When it
        ends, the server's tools are checked against what the kit offers then: a name taken
        already is a :class:`ToolConflictError` and the server is closed (add it again with a
        ``prefix=``). A close of the kit cancels a dial in flight, and its ``add_mcp`` raises
        :class:`ToolSourceError`; so does one on a closed kit.
        """
        bridge = await self._mcp_bridge(server)
        dial = asyncio.ensure_future(bridge.add(server, **options))
        self._dials.add(dial)
        try:
            label = await dial
        except asyncio.CancelledError:
            if self._closed and dial.cancelled() and not _cancelling():
                raise self._closed_error("was connecting") from None
            raise
        finally:
            self._dials.discard(dial)
        opened = Opened(label, bridge, label)
        self._opened.append(opened)
        try:
            if self._closed:  # it connected as the kit closed
                raise self._closed_error("had just connected")
            part = next(p for p in bridge.sources() if p.label == label)
            await self._union.join(label, part)
            if self._closed:  # the kit closed while the server's tools were checked
                raise self._closed_error("was being checked")
        except BaseException:
            self._union.remove(label)
            if opened in self._opened:
                self._opened.remove(opened)
                await opened.close()
            raise
        return label

    async def remove_mcp(self, label: str) -> None:
        """Stop offering an MCP server's tools from the next turn on, and close the server.

        ``label`` is one :meth:`add_mcp` returned, or the label of a server ``mcp=`` (or
        ``tool_sources={"mcp": ...}``) connected. The server leaves the union at once, then is
        closed: calls in flight to it end with a :class:`ToolSourceError` the model sees as the
        call's result, within seconds, without waiting for them.
        """
        opened = next((o for o in self._opened if o.part == label and o.part), None)
        if opened is None:
            known = [o.part for o in self._opened if o.part]
            raise ConfigError(
                f"the kit has no MCP server labelled {label!r}; its servers: "
                f"{', '.join(known) or 'none'}",
                value=label,
                source="Kit.remove_mcp",
            )
        self._opened.remove(opened)
        self._union.remove(label)
        await opened.close()

    async def mcp_prompt(
        self, server: str, name: str, args: Mapping[str, Any] | None = None
    ) -> list[Message]:
        """The prompt ``name`` of the MCP server labelled ``server``, rendered as messages.

        The MCP plugin renders it (``render_prompt`` of its bridge); ``args`` fill the prompt's
        arguments.
        """
        bridge = self._mcp
        render = getattr(bridge, "render_prompt", None)
        if render is None:
            raise ConfigError(
                f"no MCP server is connected to render the prompt {name!r} of {server!r} from; "
                "connect one with mcp= or add_mcp()",
                value=server,
                source="Kit.mcp_prompt",
            )
        rendered: list[Message] = await render(server, name, args)
        return rendered

    async def _mcp_bridge(self, server: Any) -> ToolSourceBridge:
        """The kit's MCP bridge: the one ``mcp=`` made, else one made now with its options."""
        if self._closed:
            raise self._closed_error("was about to connect")
        async with self._mcp_lock:
            if self._mcp is None:
                options = dict(self._pending_sources.get(MCP) or {})
                options.pop("servers", None)
                await self._make_source(MCP, options)
                if self._mcp is None:
                    raise ConfigError(
                        f"the installed {MCP!r} tool source cannot add servers at run time (it "
                        "is no ToolSourceBridge: add, remove, sources, aclose)",
                        value=server,
                        source="Kit.add_mcp",
                    )
        return self._mcp

    @staticmethod
    def _closed_error(what: str) -> ToolSourceError:
        return ToolSourceError(
            f"the MCP server add_mcp() was adding {what} when the kit closed, so it was not "
            "added and nothing of it is left running; add servers to an open kit"
        )

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        """Close what the kit opened; safe to call twice.

        The session's last batch is written first. Then every MCP server (those ``mcp=``
        connected and those :meth:`add_mcp` added), the session store and any other source
        are closed at once: a server's calls in flight end with a :class:`ToolSourceError`,
        and a dial :meth:`add_mcp` has in flight is cancelled. Their tools leave the union
        first, so a config handed out before keeps working, offering what is still open.
        What failed is raised as one :class:`ExceptionGroup`, its errors in reverse order of
        connection (the flush's first).
        """
        if self._closed:
            return
        self._closed = True
        errors: list[Exception] = []
        try:
            await self._recorder.flush()
        except Exception as exc:  # keep closing the others
            errors.append(exc)
        dials = list(self._dials)
        for dial in dials:
            dial.cancel()
        opened, self._opened = self._opened, []
        for o in opened:  # a part goes by its label, a plain source by the one it is offered under
            self._union.remove(o.part or o.name)
        for source in self._containers:
            if isinstance(source, CompositeToolSource):
                for part in source.sources():
                    self._union.remove(part.label)
        await asyncio.gather(*dials, return_exceptions=True)
        results = await asyncio.gather(*(o.close() for o in opened), return_exceptions=True)
        errors.extend(_failures(reversed(results)))
        containers, self._containers = self._containers, []
        results = await asyncio.gather(
            *(c.aclose() for c in reversed(containers)), return_exceptions=True
        )
        errors.extend(_failures(results))
        if errors:
            raise ExceptionGroup(
                f"closing the kit: {len(errors)} error{'s' if len(errors) > 1 else ''}", errors
            )

    close = aclose
