"""One tool namespace over several labelled sources, with filtering, wrapping and conflicts.

Nothing below the union can see that two sources offer a tool of one name: both would reach
the model and the loop would dispatch whichever it met first. So the union is where a clash is
caught: at construction it is an error naming both sources; at turn time (a server's list
changed) the later tool is dropped and the ``on_conflict`` callback is told.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import Protocol
from typing import runtime_checkable

from ._errors import ToolDefinitionError
from ._records import record
from ._tools import USER_TOOLS as USER_TOOLS  # defined beside Tool, for an agent's list
from ._tools import Tool
from ._tools import ToolFilter
from ._tools import ToolWrap


@runtime_checkable
class DynamicToolSource(Protocol):
    """A source whose tools may change between turns (an MCP server): asked every turn."""

    label: str

    async def list_tools(self) -> list[Tool]: ...


@runtime_checkable
class CompositeToolSource(Protocol):
    """A source made of several labelled sources (an MCP bridge over several servers).

    The union lists each part under its own label, so a conflict or ``kit.tools()`` names
    the server, not the bridge.
    """

    def sources(self) -> Sequence[DynamicToolSource]: ...


@runtime_checkable
class ToolSourceBridge(Protocol):
    """A composite source that connects parts at run time and drops them (the MCP bridge).

    ``add(server, **options)`` connects one more part and returns its label (a failure
    raises and leaves nothing connected); ``remove(label)`` closes that part, ending its calls
    in flight with an error; ``sources()`` are the parts connected now, in the order they were
    connected; ``aclose()`` closes every part. A kit adds its MCP servers through one
    (``kit.add_mcp``), and closes each of its parts on its own, so a close names the part that
    failed.
    """

    def sources(self) -> Sequence[DynamicToolSource]: ...

    async def add(self, server: Any, **options: Any) -> str: ...

    async def remove(self, label: str) -> None: ...

    async def aclose(self) -> None: ...


@record(frozen=True, slots=True)
class ToolOrigin:
    """One tool of the union and the label of the source it came from."""

    name: str
    source: str


@record(frozen=True, slots=True)
class ToolConflict:
    """Two tools claiming one name: where the kept one and the dropped one came from."""

    name: str
    kept: str
    dropped: str

    def __str__(self) -> str:
        return (
            f"tool name {self.name!r} is offered by {self.kept} and by {self.dropped}; "
            "filter one out (tool_filter=) or give one source a name prefix"
        )


class ToolConflictError(ToolDefinitionError):
    """Two sources offer a tool of one name at construction; ``.conflict`` says which."""

    def __init__(self, conflict: ToolConflict) -> None:
        super().__init__(str(conflict))
        self.conflict = conflict


Source = tuple[str, "Sequence[Tool] | DynamicToolSource"]


class ToolUnion:
    """The tools of several sources, in source order, each labelled with its source.

    ``sources`` is a list of ``(label, tools)`` where ``tools`` is a fixed list or a
    :class:`DynamicToolSource`. ``tool_filter(label, tool)`` runs first (so dropping one of two
    clashing tools resolves the clash); ``tool_wrap(label, tool)`` may replace a tool (None
    drops it); then duplicates are checked. Build it with :meth:`create`, which checks the
    first listing and raises :class:`ToolConflictError` on a clash.
    """

    def __init__(
        self,
        sources: Sequence[Source],
        *,
        tool_filter: ToolFilter | None = None,
        tool_wrap: ToolWrap | None = None,
        on_conflict: Callable[[ToolConflict], object] | None = None,
    ) -> None:
        self.sources = list(sources)
        self.tool_filter = tool_filter
        self.tool_wrap = tool_wrap
        self.on_conflict = on_conflict
        self._wrapped: dict[int, tuple[Tool, Tool | None]] = {}
        self._origins: list[ToolOrigin] = []
        self._joining = asyncio.Lock()

    @classmethod
    async def create(cls, sources: Sequence[Source], **options: Any) -> ToolUnion:
        """A union whose first listing has been checked: a clash now is an error."""
        union = cls(sources, **options)
        await union._list(strict=True)
        return union

    def add(self, label: str, tools: Sequence[Tool] | DynamicToolSource) -> None:
        """Offer another source from the next turn on (after the ones already given)."""
        self.sources = [*self.sources, (label, tools)]

    async def join(self, label: str, tools: Sequence[Tool] | DynamicToolSource) -> None:
        """:meth:`add` a source whose tools clash with none the union offers now.

        The union is listed with the source in it, as at construction: a name two sources
        offer raises :class:`ToolConflictError` and the union stays as it was (the caller
        still owns the source, and closes it or renames its tools). A label already in the
        union is a :class:`ToolDefinitionError`.
        """
        async with self._joining:  # two joins at once: the second is checked against the first
            if any(lbl == label for lbl, _ in self.sources):
                raise ToolDefinitionError(
                    f"the tool union already has a source labelled {label!r}; labels name one "
                    "source each"
                )
            trial = ToolUnion(
                [*self.sources, (label, tools)],
                tool_filter=self.tool_filter,
                tool_wrap=self.tool_wrap,
            )
            trial._wrapped = self._wrapped
            await trial._list(strict=True)
            self.add(label, tools)
            self._origins = trial._origins

    def remove(self, label: str) -> None:
        """Stop offering a source's tools from the next turn on (a turn under way keeps them)."""
        self.sources = [(lbl, s) for lbl, s in self.sources if lbl != label]

    def origins(self) -> list[ToolOrigin]:
        """Each tool of the last listing with its source label."""
        return list(self._origins)

    async def tools(self) -> list[Tool]:
        """The tools to offer this turn; a clash drops the later tool and reports it."""
        return await self._list(strict=False)

    async def _list(self, *, strict: bool) -> list[Tool]:
        listings: list[tuple[str, Sequence[Tool], bool]] = []
        # the list as it is now: a source added or removed while a server answers does not
        # change this listing (add and remove replace the list, never edit it)
        for label, source in self.sources:
            if isinstance(source, Sequence):
                listings.append((label, source, False))
            else:
                listings.append((label, await source.list_tools(), True))
        tools, conflicts = self._merge(listings, strict=strict)
        for conflict in conflicts:
            if self.on_conflict is not None:
                result = self.on_conflict(conflict)
                if inspect.isawaitable(result):
                    await result
        return tools

    def check_fixed(self) -> None:
        """Check a union whose sources are all fixed lists, without an event loop."""
        # a fixed source is a sequence of tools; isinstance against the runtime Protocol would
        # cost tens of microseconds a source, every turn
        if not all(isinstance(s, Sequence) for _, s in self.sources):
            raise ToolDefinitionError("a dynamic tool source is listed only by 'await create()'")
        self._merge([(label, s, False) for label, s in self.sources], strict=True)  # type: ignore[misc]

    def _merge(
        self, listings: Sequence[tuple[str, Sequence[Tool], bool]], *, strict: bool
    ) -> tuple[list[Tool], list[ToolConflict]]:
        out: list[Tool] = []
        origins: list[ToolOrigin] = []
        conflicts: list[ToolConflict] = []
        taken: dict[str, str] = {}
        for label, listed, dynamic in listings:
            for tool in listed:
                if self.tool_filter is not None and not self.tool_filter(label, tool):
                    continue
                offered = self._wrap(label, tool, cache=not dynamic)
                if offered is None:
                    continue
                if offered.name in taken:
                    conflict = ToolConflict(offered.name, taken[offered.name], label)
                    if strict:
                        raise ToolConflictError(conflict)
                    conflicts.append(conflict)
                    continue
                taken[offered.name] = label
                out.append(offered)
                origins.append(ToolOrigin(offered.name, label))
        self._origins = origins
        return out, conflicts

    def _wrap(self, label: str, tool: Tool, *, cache: bool) -> Tool | None:
        """A fixed source's tool is wrapped once; a dynamic source's every turn it is listed."""
        if self.tool_wrap is None:
            return tool
        if not cache:
            return self.tool_wrap(label, tool)
        hit = self._wrapped.get(id(tool))
        if hit is None or hit[0] is not tool:
            hit = (tool, self.tool_wrap(label, tool))
            self._wrapped[id(tool)] = hit
        return hit[1]
