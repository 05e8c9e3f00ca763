"""Instruction parts: named blocks of the system prompt, joined in a stated order under a budget.

The kit assembles an agent's instructions from parts (the product's prompt, a skills catalogue,
memory, the AGENTS.md chain). :func:`compose_instructions` is the one function that orders
them, bounds them and reports what was left out; the kit calls it, and so can anyone building
an agent by hand, with the same result.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Protocol
from typing import runtime_checkable

from ._errors import ConfigError
from ._errors import PluginError
from ._messages import Message

if TYPE_CHECKING:
    from ._context import RunContext
    from ._models import ModelRequest
    from ._tools import Tool

PART_PRODUCT = "product"
PART_SKILLS = "skills"
PART_MEMORY = "memory"
PART_AGENTSMD = "agentsmd"

#: Later text refines earlier, so the most specific goes last (argued in docs/ordering.md).
DEFAULT_ORDER: tuple[str, ...] = (PART_PRODUCT, PART_SKILLS, PART_MEMORY, PART_AGENTSMD)

#: What joins two parts.
SEPARATOR = "\n\n"

#: ``guard(part, ctx)``: the part as it is to be sent (its text possibly rewritten); raises to
#: refuse it. ``ctx`` is the run the composition is for, None at construction.
PartGuard = Callable[["InstructionPart", "RunContext | None"], "InstructionPart"]


@dataclass(frozen=True, slots=True)
class InstructionPart:
    """One named block of the instructions as sent: its id, text and the layer that made it."""

    id: str
    text: str
    source: str


@dataclass(frozen=True, slots=True)
class Omission:
    """Something a layer considered for the instructions and left out.

    ``what`` is the layer's stable key for it (an absolute path, a skill's location);
    ``reason`` the layer's word for why; ``size`` the bytes it would have added (0 if unknown);
    ``by`` what took its place, for a shadowing.
    """

    part: str
    source: str
    what: str
    reason: str
    size: int = 0
    by: str = ""

    def __str__(self) -> str:
        by = f", shadowed by {self.by}" if self.by else ""
        return f"{self.part}: {self.what} ({self.reason}{by}, {self.size} bytes)"


@dataclass(frozen=True, slots=True)
class Rendered:
    """What a part source produced for one budget: its text and what it left out.

    A source whose text is a **group** of parts (the memory block: a part per entry) also
    gives ``parts``: their texts joined with :data:`SEPARATOR` are ``text``, the first part's
    id is the source's id, and every other id starts with ``"<id>/"`` or ``"<id>:"``. Each is
    then reported and recorded as its own part, so a change to one entry is a change to one
    part. Without ``parts`` the text is one part named after the source.
    """

    text: str
    omissions: tuple[Omission, ...] = ()
    parts: tuple[InstructionPart, ...] = ()


@runtime_checkable
class PartSource(Protocol):
    """A layer that contributes one instruction part.

    ``render(max_bytes)`` returns the part's text; ``max_bytes`` is None when no instruction
    budget is set (the layer applies its own bounds). A ``shrinkable`` source must return at
    most ``max_bytes`` UTF-8 bytes, leaving out what does not fit and reporting it as
    omissions; one that is not shrinkable is measured as it is. ``tools`` are offered to the
    model alongside the part (the skills catalogue's reading tool, say).
    """

    id: str
    source: str
    shrinkable: bool

    @property
    def tools(self) -> Sequence[Tool]:
        """Read only: a plain attribute or a property (the skills catalogue's) will do."""
        ...

    def render(self, max_bytes: int | None) -> Rendered: ...


@runtime_checkable
class ReloadablePartSource(PartSource, Protocol):
    """A part source that can discover again (a skills directory that changed)."""

    def reload(self) -> None: ...


@dataclass(slots=True)
class TextPart:
    """A fixed part: the product's own prompt, or any text given in code."""

    text: str
    id: str = PART_PRODUCT
    source: str = PART_PRODUCT
    shrinkable: bool = False
    tools: Sequence[Tool] = field(default_factory=tuple)

    def render(self, max_bytes: int | None) -> Rendered:
        return Rendered(self.text)


@dataclass(frozen=True, slots=True)
class Instructions:
    """The joined text, the parts it was joined from (in order), and every omission."""

    text: str
    parts: tuple[InstructionPart, ...]
    omissions: tuple[Omission, ...]


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def order_sources(
    sources: Iterable[PartSource], order: Sequence[str] | None = None
) -> list[PartSource]:
    """The sources in join order.

    ``order``, if given, must name every source's id exactly once; otherwise
    :data:`DEFAULT_ORDER`, with ids it does not know appended by name.
    """
    by_id: dict[str, PartSource] = {}
    for src in sources:
        if src.id in by_id:
            raise ConfigError(
                f"two instruction parts share the id {src.id!r} ({by_id[src.id].source} and "
                f"{src.source}); configure one of them",
                value=src.id,
                source="instruction parts",
            )
        by_id[src.id] = src
    if order is None:
        known = [i for i in DEFAULT_ORDER if i in by_id]
        return [by_id[i] for i in known + sorted(set(by_id) - set(known))]
    ids = list(order)
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    unknown = [i for i in ids if i not in by_id]
    missing = [i for i in by_id if i not in ids]
    if duplicates or unknown or missing:
        problems = []
        if duplicates:
            problems.append(f"named twice: {', '.join(duplicates)}")
        if unknown:
            problems.append(f"not configured: {', '.join(unknown)}")
        if missing:
            problems.append(f"left out: {', '.join(missing)}")
        raise ConfigError(
            f"order={ids!r} must name every configured instruction part exactly once "
            f"({'; '.join(problems)}); configured parts: {', '.join(by_id)}",
            value=ids,
            source="order=",
        )
    return [by_id[i] for i in ids]


def compose_instructions(
    sources: Iterable[PartSource],
    *,
    order: Sequence[str] | None = None,
    budget: int | None = None,
) -> Instructions:
    """Order, bound and join instruction parts.

    With a ``budget`` (bytes of the joined text, separators included), the parts that cannot
    be shortened are measured first and a total over the budget is a :class:`ConfigError`
    naming them. What is left goes to the shrinkable parts, the last in the join order
    first: the most specific text has the last word, so it also has the first claim. A part
    that renders empty is left out of the join.
    """
    ordered = order_sources(sources, order)
    rendered: dict[str, Rendered] = {}
    if budget is None:
        for src in ordered:
            rendered[src.id] = src.render(None)
    else:
        fixed = [s for s in ordered if not s.shrinkable]
        for src in fixed:
            rendered[src.id] = src.render(None)
        fixed_bytes = sum(_size(rendered[s.id].text) for s in fixed)
        joins = _size(SEPARATOR) * max(len(ordered) - 1, 0)
        if fixed_bytes + joins > budget:
            sizes = ", ".join(f"{s.id} {_size(rendered[s.id].text)}" for s in fixed)
            raise ConfigError(
                f"instruction_budget={budget} bytes is smaller than the parts that cannot be "
                f"shortened ({sizes}, plus {joins} bytes of separators); raise the budget or "
                "shorten those parts",
                value=budget,
                source="instruction_budget=",
            )
        left = budget - fixed_bytes - joins
        for src in reversed([s for s in ordered if s.shrinkable]):
            out = src.render(left)
            if _size(out.text) > left:
                raise PluginError(
                    f"instruction part {src.id!r} ({src.source}) rendered "
                    f"{_size(out.text)} bytes for a bound of {left}; a shrinkable part must "
                    "fit the bound it is given",
                    plugin=src.source,
                )
            rendered[src.id] = out
            left -= _size(out.text)
    parts: list[InstructionPart] = []
    for src in ordered:
        out = rendered[src.id]
        if out.parts:
            parts.extend(_group(src, out))
        elif out.text:
            parts.append(InstructionPart(src.id, out.text, src.source))
    omissions = tuple(o for s in ordered for o in rendered[s.id].omissions)
    return Instructions(SEPARATOR.join(p.text for p in parts), tuple(parts), omissions)


def _group(src: PartSource, out: Rendered) -> tuple[InstructionPart, ...]:
    """The parts of a group render, checked: they join to its text, under the source's id."""
    ids = [p.id for p in out.parts]
    problem = ""
    if SEPARATOR.join(p.text for p in out.parts) != out.text:
        problem = "its parts do not join to its text"
    elif ids[0] != src.id:
        problem = f"its first part is {ids[0]!r}, not {src.id!r}"
    elif any(not p.text for p in out.parts):
        problem = "a part of it is empty"
    elif len(set(ids)) != len(ids):
        problem = "two of its parts share an id"
    else:
        stray = [i for i in ids[1:] if not i.startswith((f"{src.id}/", f"{src.id}:"))]
        if stray:
            problem = f"part {stray[0]!r} is not named under {src.id!r}"
    if problem:
        raise PluginError(
            f"instruction part {src.id!r} ({src.source}) rendered a group of parts, but "
            f"{problem}; report it to the part's authors",
            plugin=src.source,
        )
    return out.parts


@runtime_checkable
class LivePartSource(PartSource, Protocol):
    """A part whose content changes while agents run (memory), read again before every request.

    ``read(ctx)`` reads the current state and returns a source bound to it, which the
    composition renders; ``sent(ctx, view, request)`` is then told which view went into the
    request and returns the request to send (the memory block keeps the run's render and
    withholds its write tools when the budget left the block out).
    """

    async def read(self, ctx: RunContext) -> PartSource: ...

    def sent(self, ctx: RunContext, view: PartSource, request: ModelRequest) -> ModelRequest: ...


class LiveInstructions:
    """Instructions composed again before every model call, for parts that change (memory).

    Built over the same sources, order and budget as :func:`compose_instructions`, whose
    result it holds as ``current``; ``text`` is the first composition, what an agent's prompt
    (``AgentConfig.instructions``) holds. :meth:`before_model_call` is a hook
    (``Hooks.of("instructions", before_model_call=live.before_model_call)``, first in the
    chain): it reads every :class:`LivePartSource` again, composes the parts, and puts the
    result where the agent put its prompt, the request's first system message. Each run
    composes for itself; ``current`` is the composition of whichever request was last.
    :meth:`parts_for` names the parts of any recent composition, for a recorder.

    ``guard`` (optional, a :class:`GuardChain`'s ``check_part``) is applied to each part on its
    own after the parts are rendered under the budget and before they are joined, in every
    composition (the first, each request's, a recompose): so a part a guard rewrote is
    reported and recorded as it was sent. The budget is measured before the guard, so a
    rewrite that lengthens a part can take the joined text over it.
    """

    #: How many compositions ``parts_for`` remembers (concurrent runs each have theirs).
    RECENT = 64

    def __init__(
        self,
        sources: Iterable[PartSource],
        *,
        order: Sequence[str] | None = None,
        budget: int | None = None,
        guard: PartGuard | None = None,
    ) -> None:
        self.sources = tuple(sources)
        self.order = None if order is None else tuple(order)
        self.budget = budget
        self.guard = guard
        self._live = [s for s in self.sources if isinstance(s, LivePartSource)]
        self._recent: OrderedDict[str, Instructions] = OrderedDict()
        self.current = self._keep(self._join(self.sources, None))
        self.text = self.current.text

    @property
    def live_sources(self) -> tuple[LivePartSource, ...]:
        """The sources read again before every request (the :class:`LivePartSource` ones)."""
        return tuple(self._live)

    async def compose(self, ctx: RunContext) -> tuple[Instructions, list[PartSource]]:
        """Read the live parts for ``ctx``'s run and compose; returns the views it rendered."""
        views = [await s.read(ctx) if s in self._live else s for s in self.sources]
        return self._keep(self._join(views, ctx)), views

    async def before_model_call(self, ctx: RunContext, request: ModelRequest) -> ModelRequest:
        """``request`` with the instructions composed now in place of the prompt."""
        made, views = await self.compose(ctx)
        messages = request.messages
        if self.text and messages and messages[0].role == "system":
            messages = messages[1:]  # the prompt's slot (without a prompt there is none)
        if made.text:
            messages = (Message.system(made.text), *messages)
        request = replace(request, messages=messages)
        for src, view in zip(self.sources, views, strict=True):
            if src in self._live:
                request = src.sent(ctx, view, request)  # type: ignore[attr-defined]
        return request

    def parts_for(self, text: str) -> tuple[list[InstructionPart], list[Omission]] | None:
        """The parts and omissions of a recent composition that joins to ``text``, else None."""
        found = self._recent.get(text)
        if found is None:
            return None
        return list(found.parts), list(found.omissions)

    def recompose(self) -> Instructions:
        """Compose again from what every part holds now (after a reload): the new ``text``."""
        made = self._keep(self._join(self.sources, None))
        self.text = made.text
        return made

    def _join(self, sources: Sequence[PartSource], ctx: RunContext | None) -> Instructions:
        """Compose ``sources`` under the budget, guard each part, and join what is left."""
        made = compose_instructions(sources, order=self.order, budget=self.budget)
        if self.guard is None:
            return made
        parts = tuple(self.guard(p, ctx) for p in made.parts)
        parts = tuple(p for p in parts if p.text)
        return Instructions(SEPARATOR.join(p.text for p in parts), parts, made.omissions)

    def _keep(self, made: Instructions) -> Instructions:
        self._recent[made.text] = made
        self._recent.move_to_end(made.text)
        while len(self._recent) > self.RECENT:
            self._recent.popitem(last=False)
        self.current = made
        return made
