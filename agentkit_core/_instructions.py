"""Instruction parts: named blocks of the system prompt, joined in a stated order under a budget.

The kit assembles an agent's instructions from parts (the product's prompt, a skills catalogue,
memory, the AGENTS.md chain). :func:`compose_instructions` is the one function that orders
them, bounds them and reports what was left out; the kit calls it, and so can anyone building
an agent by hand, with the same result.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Protocol
from typing import runtime_checkable

from ._errors import ConfigError
from ._errors import PluginError

if TYPE_CHECKING:
    from ._tools import Tool

PART_PRODUCT = "product"
PART_SKILLS = "skills"
PART_MEMORY = "memory"
PART_AGENTSMD = "agentsmd"

#: Later text refines earlier, so the most specific goes last (argued in docs/ordering.md).
DEFAULT_ORDER: tuple[str, ...] = (PART_PRODUCT, PART_SKILLS, PART_MEMORY, PART_AGENTSMD)

#: What joins two parts.
SEPARATOR = "\n\n"


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
    """What a part source produced for one budget: its text and what it left out."""

    text: str
    omissions: tuple[Omission, ...] = ()


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
    tools: Sequence[Tool]

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
    parts = tuple(
        InstructionPart(s.id, rendered[s.id].text, s.source) for s in ordered if rendered[s.id].text
    )
    omissions = tuple(o for s in ordered for o in rendered[s.id].omissions)
    return Instructions(SEPARATOR.join(p.text for p in parts), parts, omissions)
