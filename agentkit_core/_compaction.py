"""Compaction: the Compactor seam, the one cut helper every compactor uses, the middleware.

A transcript can only be cut between *units*: a tool result separated from the assistant
message that requested it, or an assistant message with tool calls kept without all of its
results, is a 400 from every provider. :func:`compaction_units` is the one place that knows
where the boundaries are, so no compactor re-derives it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Literal
from typing import Protocol
from typing import runtime_checkable

from ._messages import Message
from ._middleware import CallModel
from ._middleware import Middleware
from ._models import ModelRequest
from ._models import ModelResponse
from ._tokens import Estimator
from ._tokens import estimate_message
from ._tokens import estimate_tokens
from ._tracing import current_span

if TYPE_CHECKING:
    from ._context import RunContext

#: What a compactor-written message (a summary) carries in ``Message.metadata["compaction"]``.
SUMMARY = "summary"


@runtime_checkable
class Compactor(Protocol):
    """Shrinks a transcript: ``async compact(messages, ctx) -> messages``.

    Each implementation owns its threshold: a transcript already small enough comes back
    unchanged, so callers need no guard. Whatever it is given, a compactor keeps a leading
    system message verbatim, never separates a tool result from the assistant message that
    requested it, never keeps a tool-calling assistant message without all of its results,
    and never returns an empty list.
    """

    async def compact(self, messages: list[Message], ctx: RunContext) -> list[Message]: ...


UnitKind = Literal["system", "message", "tool_turn", "orphan"]


@dataclass(frozen=True, slots=True)
class Unit:
    """Messages ``[start, end)`` of a transcript that stand or fall together.

    ``system``: the leading system message. ``tool_turn``: an assistant message with tool
    calls and the tool results that answer it. ``orphan``: tool results with no requesting
    assistant in view (already invalid; compaction drops them). ``message``: anything else.
    """

    start: int
    end: int
    kind: UnitKind
    tokens: int

    @property
    def size(self) -> int:
        return self.end - self.start


def units_from_end(
    messages: Sequence[Message], estimate: Estimator | None = None
) -> Iterator[Unit]:
    """The units of a transcript newest first, found lazily from its end.

    Only the units a caller actually takes are estimated, so walking back to a budget costs the
    size of what is kept, not of the whole transcript. Every non-tool message starts a unit; a
    run of tool results belongs to the assistant message just before it for as long as their ids
    are among its calls, and the rest of the run is an orphan unit.
    """
    cost = (lambda m: estimate([m])) if estimate is not None else estimate_message
    lead = 1 if messages and messages[0].role == "system" else 0
    end = len(messages)
    while end > lead:
        last = messages[end - 1]
        if last.role != "tool":
            kind: UnitKind = (
                "tool_turn" if last.role == "assistant" and last.tool_calls else "message"
            )
            yield Unit(end - 1, end, kind, cost(last))
            end -= 1
            continue
        first = end - 1
        while first > lead and messages[first - 1].role == "tool":
            first -= 1
        owner = messages[first - 1] if first > lead else None
        if owner is None or owner.role != "assistant" or not owner.tool_calls:
            yield Unit(first, end, "orphan", sum(cost(m) for m in messages[first:end]))
            end = first
            continue
        ids = {c.id for c in owner.tool_calls}
        answered = first
        while answered < end and messages[answered].tool_call_id in ids:
            answered += 1
        if answered < end:
            yield Unit(answered, end, "orphan", sum(cost(m) for m in messages[answered:end]))
        yield Unit(
            first - 1, answered, "tool_turn", sum(cost(m) for m in messages[first - 1 : answered])
        )
        end = first - 1
    if lead:
        yield Unit(0, 1, "system", cost(messages[0]))


def compaction_units(messages: Sequence[Message], estimate: Estimator | None = None) -> list[Unit]:
    """Split a transcript into units in transcript order, each with its token estimate."""
    units = list(units_from_end(messages, estimate))
    units.reverse()
    return units


def keep_units(messages: Sequence[Message], units: Iterable[Unit]) -> list[Message]:
    """The messages of ``units``, in transcript order."""
    out: list[Message] = []
    for unit in sorted(units, key=lambda u: u.start):
        out.extend(messages[unit.start : unit.end])
    return out


def recent_units(units: Iterable[Unit], budget: int, cost: Callable[[Unit], int]) -> list[Unit]:
    """The most recent non-system units whose summed ``cost`` stays within ``budget``.

    ``units`` come newest first (:func:`units_from_end`, or ``reversed(compaction_units(...))``)
    and are taken lazily. The walk stops at the first unit that does not fit, so what is kept is
    one contiguous recent run, returned in transcript order. The newest unit is kept even when
    it alone is over the budget: the result is never empty. Orphaned tool results are never kept.
    """
    kept: list[Unit] = []
    used = 0
    for unit in units:
        if unit.kind in ("system", "orphan"):
            continue
        if kept and used + cost(unit) > budget:
            break
        kept.append(unit)
        used += cost(unit)
    kept.reverse()
    return kept


def within_budget(units: Iterable[Unit], budget: int) -> bool:
    """Whether the units' tokens sum to at most ``budget``; stops at the first unit over it."""
    total = 0
    for unit in units:
        total += unit.tokens
        if total > budget:
            return False
    return True


# Set while a compactor runs, so the model calls it makes (a summary, a filter) pass the
# compaction() middleware untouched instead of being compacted again.
_compacting: contextvars.ContextVar[bool] = contextvars.ContextVar("compacting", default=False)


async def run_compactor(
    compactor: Compactor, messages: list[Message], ctx: RunContext
) -> list[Message]:
    """``compactor.compact(messages, ctx)``, marked so its own model calls are not compacted."""
    token = _compacting.set(True)
    try:
        return await compactor.compact(messages, ctx)
    finally:
        _compacting.reset(token)


class _Compaction(Middleware):
    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        span = current_span()
        before = list(request.messages)
        if request.ctx is None or _compacting.get():
            return await call_next(request)
        after = await run_compactor(self.compactor, list(before), request.ctx)
        reason = _rejection(before, after)
        if reason is not None:
            span.set("compaction_rejected", reason)
            return await call_next(request)
        span.set("compaction_messages_before", len(before))
        span.set("compaction_messages_after", len(after))
        span.set("compaction_tokens_before", estimate_tokens(before))
        span.set("compaction_tokens_after", estimate_tokens(after))
        if after == before:
            return await call_next(request)
        return await call_next(replace(request, messages=tuple(after)))


def _rejection(before: list[Message], after: list[Message]) -> str | None:
    if not after:
        return "the compactor returned no messages"
    if before and before[0].role == "system" and after[0] != before[0]:
        return "the compactor dropped or altered the leading system message"
    return None


def compaction(compactor: Compactor) -> Middleware:
    """Run ``compactor`` on every assembled request (prefix and tail) before the model.

    A rewrite that returns no messages, or that drops or alters the leading system message,
    is refused: the request goes on whole and the span says why (``compaction_rejected``).
    The span also records message and token counts before and after. A name is refused:
    names belong to the lookup layer (:func:`get_compactor`).
    """
    if not isinstance(compactor, Compactor) or isinstance(compactor, type):
        from ._errors import ConfigError

        hint = repr(compactor) if isinstance(compactor, str) else "'truncation'"
        raise ConfigError(
            f"compaction() needs a Compactor object (async compact(messages, ctx)), got "
            f"{compactor!r}; build an installed one with get_compactor({hint}, manager=pm)",
            value=compactor,
            source="compaction",
        )
    return _Compaction(compactor)
