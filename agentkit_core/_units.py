"""Units: where a transcript may be cut, and the repair of what no request may carry.

A tool result answers the call whose id it names, wherever the two sit: a user message approving
the call, a note, or a result that arrives a turn later may come between them. Every provider
rejects a call sent without its result, or a result without its call, so a transcript may only be
cut where no call-result pair straddles the cut. :func:`units_from_end` is the one place that
knows where those places are; every compactor, the compaction middleware, the fold and the
repair use it.

Pairing, by id: a result answers the nearest call before it with its id that no nearer result
answered. A result that answers nothing is *orphaned*; a call no result answers leaves its
assistant message *unanswered*, and that message, with the results of its other calls, cannot be
sent either. :func:`repair_transcript` drops exactly those messages.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Literal

from ._messages import Message
from ._messages import ToolCall
from ._tokens import Estimator
from ._tokens import estimate_message

UnitKind = Literal["system", "message", "tool_turn", "broken"]


@dataclass(frozen=True, slots=True)
class Unit:
    """Messages ``[start, end)`` of a transcript that stand or fall together.

    ``system``: one of the leading system messages (the head). ``tool_turn``: an assistant
    message with tool calls, every result that answers them, and whatever sits between them.
    ``message``: one message that no pair straddles. ``broken``: only messages no request may
    carry. ``skip`` holds the indices inside the unit that cannot be sent (orphaned results,
    unanswered calls and their siblings' results): keeping a unit keeps the rest of it.
    ``tokens`` counts the messages that would be kept.
    """

    start: int
    end: int
    kind: UnitKind
    tokens: int
    skip: frozenset[int] = frozenset()

    @property
    def size(self) -> int:
        """How many of its messages keeping the unit keeps."""
        return self.end - self.start - len(self.skip)

    def indices(self) -> Iterator[int]:
        """The indices of the messages keeping the unit keeps, in order."""
        skip = self.skip
        return (i for i in range(self.start, self.end) if i not in skip)


def head_length(messages: Sequence[Message], *, all_system: bool = False) -> int:
    """How many leading messages are the head: the first system message, or every leading one."""
    if not all_system:
        return 1 if messages and messages[0].role == "system" else 0
    n = 0
    while n < len(messages) and messages[n].role == "system":
        n += 1
    return n


def units_from_end(
    messages: Sequence[Message], estimate: Estimator | None = None, *, head: int | None = None
) -> Iterator[Unit]:
    """The units of a transcript newest first, found lazily from its end.

    ``head`` is how many leading messages are ``system`` units (default: the first message when
    it is a system message). Only the units a caller takes are estimated, and in a transcript
    whose every result answers a call the walk reads only as far back as the units it yields, so
    walking back to a budget costs the size of what is kept. An orphaned result can only be known
    as one at the transcript's start: the walk then reads back that far once (ids only).
    """
    cost: Callable[[Message], int] = (
        (lambda m: estimate([m])) if estimate is not None else estimate_message
    )
    lead = head_length(messages) if head is None else head
    orphans: set[int] = set()
    end = len(messages)
    while end > lead:
        last = messages[end - 1]
        if last.role != "tool" and not last.tool_calls:  # the common case, decided at once
            yield Unit(end - 1, end, "message", cost(last))
            end -= 1
            continue
        found = _unit_before(messages, end, lead, orphans)
        if isinstance(found, list):  # results still open at the head: orphans, now known
            orphans.update(found)
            continue
        start, skip = found
        if not skip:  # a call closed it, and every call in it is answered
            tokens = sum(cost(m) for m in messages[start:end])
            yield Unit(start, end, "tool_turn", tokens)
            end = start
            continue
        kept = [i for i in range(start, end) if i not in skip]
        if not kept:
            kind: UnitKind = "broken"
        elif any(messages[i].tool_calls for i in kept):
            kind = "tool_turn"
        else:
            kind = "message"
        yield Unit(start, end, kind, sum(cost(messages[i]) for i in kept), frozenset(skip))
        end = start
    for i in reversed(range(min(lead, len(messages)))):
        yield Unit(i, i + 1, "system", cost(messages[i]))


def _unit_before(
    messages: Sequence[Message], end: int, lead: int, orphans: set[int]
) -> tuple[int, set[int]] | list[int]:
    """The unit ending at ``end``: its start and the indices it cannot send.

    Walks back until no result at or after the current index waits for a call before it. When
    the walk reaches ``lead`` with results still waiting, returns their indices instead.
    """
    waiting: dict[str, list[int]] = {}  # result id -> indices, nearest last
    n_waiting = 0
    skip: set[int] = set()
    p = end
    while p > lead:
        p -= 1
        m = messages[p]
        if m.role == "tool":
            if p in orphans or m.tool_call_id is None:
                skip.add(p)
            else:
                waiting.setdefault(m.tool_call_id, []).append(p)
                n_waiting += 1
        elif m.tool_calls:
            answers = []
            unanswered = False
            for call in m.tool_calls:
                stack = waiting.get(call.id)
                if stack:
                    answers.append(stack.pop())
                    n_waiting -= 1
                else:
                    unanswered = True
            if unanswered:
                skip.add(p)
                skip.update(answers)
        if n_waiting == 0:
            return p, skip
    return [i for stack in waiting.values() for i in stack]


def compaction_units(
    messages: Sequence[Message], estimate: Estimator | None = None, *, head: int | None = None
) -> list[Unit]:
    """Split a transcript into units in transcript order, each with its token estimate."""
    units = list(units_from_end(messages, estimate, head=head))
    units.reverse()
    return units


def keep_units(messages: Sequence[Message], units: Iterable[Unit]) -> list[Message]:
    """The messages the ``units`` keep (their ``skip`` left out), in transcript order."""
    out: list[Message] = []
    for unit in sorted(units, key=lambda u: u.start):
        if unit.skip:
            out.extend(messages[i] for i in unit.indices())
        else:
            out.extend(messages[unit.start : unit.end])
    return out


def recent_units(
    units: Iterable[Unit],
    budget: int,
    cost: Callable[[Unit], int],
    *,
    keep: int | None = None,
) -> list[Unit]:
    """The most recent non-system units whose summed ``cost`` stays within ``budget``.

    ``units`` come newest first (:func:`units_from_end`, or ``reversed(compaction_units(...))``)
    and are taken lazily. The walk stops at the first unit that does not fit, so what is kept is
    one contiguous recent run, returned in transcript order. The newest unit that can be sent is
    kept even when it alone is over the budget: the result is never empty while there is one.
    Broken units are never kept.

    ``keep``: the index of a message that must survive, in practice :func:`newest_user` (the
    question the run answers: without it the model works on tool results with no task). When
    the run does not reach it, its unit's cost is set aside first and the run fills the rest,
    so the result is that unit and a shorter recent run.
    """
    if keep is None:
        return _recent(units, budget, cost)
    walked: list[Unit] = []
    pinned = None
    rest = iter(units)
    for unit in rest:
        if unit.kind in ("system", "broken"):
            continue
        if unit.start <= keep < unit.end:
            pinned = unit
            break
        walked.append(unit)
    if pinned is None:  # a system message, a broken unit, or no such message: nothing to pin
        return _recent(walked, budget, cost)
    room = budget - cost(pinned)
    if sum(map(cost, walked)) <= room:  # the run reaches it: it goes on past it as without keep
        return _recent(chain(walked, [pinned], rest), budget, cost)
    return [pinned, *_recent(walked, room, cost)]


def _recent(units: Iterable[Unit], budget: int, cost: Callable[[Unit], int]) -> list[Unit]:
    kept: list[Unit] = []
    used = 0
    for unit in units:
        if unit.kind in ("system", "broken"):
            continue
        if kept and used + cost(unit) > budget:
            break
        kept.append(unit)
        used += cost(unit)
    kept.reverse()
    return kept


def newest_user(messages: Sequence[Message]) -> int | None:
    """The index of the newest user message (the question a run answers), or None."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return None


def within_budget(units: Iterable[Unit], budget: int) -> bool:
    """Whether the units' tokens sum to at most ``budget``; stops at the first unit over it."""
    total = 0
    for unit in units:
        total += unit.tokens
        if total > budget:
            return False
    return True


# --------------------------------------------------------------------------- the repair


@dataclass(frozen=True, slots=True)
class Repair:
    """What :func:`repair_transcript` dropped: indices, and the result and call ids they held."""

    dropped: tuple[int, ...]
    results: tuple[str | None, ...]
    calls: tuple[str, ...]

    def __str__(self) -> str:
        parts = []
        if self.results:
            parts.append(f"tool results {', '.join(map(repr, self.results))}")
        if self.calls:
            parts.append(f"assistant messages with calls {', '.join(map(repr, self.calls))}")
        return f"dropped {len(self.dropped)} message(s): " + "; ".join(parts)


def repair_transcript(messages: Sequence[Message]) -> tuple[list[Message], Repair | None]:
    """``messages`` without what no provider accepts, and what was dropped (None: nothing).

    Dropped: every orphaned result, and every assistant message with a call no result answers
    together with the results of its other calls. A valid transcript comes back as a list of the
    same messages after one pass over the ids.
    """
    if _valid(messages):
        return list(messages), None
    units = compaction_units(messages, _no_cost, head=0)
    dropped = tuple(sorted(i for u in units for i in u.skip))
    out = keep_units(messages, units)
    results = tuple(messages[i].tool_call_id for i in dropped if messages[i].role == "tool")
    calls = tuple(c.id for i in dropped for c in messages[i].tool_calls)
    return out, Repair(dropped, results, calls)


def _no_cost(messages: Iterable[Message]) -> int:
    return 0


def _valid(messages: Sequence[Message]) -> bool:
    """Whether every result answers an earlier call and every call is answered (one pass)."""
    open_calls: dict[str, int] = {}
    for m in messages:
        if m.role == "tool":
            key = m.tool_call_id
            if key is None or not open_calls.get(key):
                return False
            open_calls[key] -= 1
        for call in m.tool_calls:
            open_calls[call.id] = open_calls.get(call.id, 0) + 1
    return not any(open_calls.values())


def pending_calls(messages: Sequence[Message]) -> tuple[ToolCall, ...]:
    """The calls still waiting for their result.

    Those of the newest assistant message that no result answers, when nothing but tool results
    follows it (the run has not moved on; otherwise the call is abandoned, and repaired away).
    """
    i = len(messages)
    while i > 0 and messages[i - 1].role == "tool":
        i -= 1
    if i == 0 or not messages[i - 1].tool_calls:
        return ()
    answered: dict[str | None, int] = {}
    for m in messages[i:]:
        answered[m.tool_call_id] = answered.get(m.tool_call_id, 0) + 1
    waiting = []
    for call in messages[i - 1].tool_calls:
        if answered.get(call.id):
            answered[call.id] -= 1
        else:
            waiting.append(call)
    return tuple(waiting)
