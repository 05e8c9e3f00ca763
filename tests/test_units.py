"""Units: pairing by id wherever results sit, lazy walks, the repair, pending calls."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core.plugin import compaction_units
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import keep_units
from agentkit_core.plugin import pending_calls
from agentkit_core.plugin import recent_units
from agentkit_core.plugin import repair_transcript
from agentkit_core.plugin import units_from_end
from agentkit_core.plugin import within_budget
from agentkit_core.testing import check_sendable
from agentkit_core.testing import transcripts


def tool_heavy(n: int) -> list[Message]:
    out = [Message.system("s")]
    for i in range(n):
        calls = [ToolCall(f"c{i}a", "f", json.dumps({"i": i})), ToolCall(f"c{i}b", "g")]
        out += [Message.user(f"u{i}"), Message.assistant("", calls)]
        out += [Message.tool(c.id, "r") for c in calls]
    return out


def sendable(messages: list[Message]) -> bool:
    try:
        check_sendable(messages)
    except AssertionError:
        return False
    return True


def test_the_cut_helpers_keep_whole_units_in_order() -> None:
    msgs = [Message.system("s"), Message.tool("gone", "r"), *tool_heavy(3)[1:]]
    units = compaction_units(msgs)
    assert [u.kind for u in units] == ["system", "broken"] + ["message", "tool_turn"] * 3
    assert [(u.start, u.end) for u in units[2:4]] == [(2, 3), (3, 6)]
    assert units[1].skip == {1} and units[1].size == 0 and units[1].tokens == 0
    assert sum(u.tokens for u in units) == estimate_tokens(msgs) - estimate_tokens(msgs[1:2])
    assert list(units_from_end(msgs)) == units[::-1]
    kept = recent_units(reversed(units), 2, lambda u: 1)
    assert kept == units[-2:]
    assert keep_units(msgs, [kept[1], units[0], kept[0]]) == [msgs[0], *msgs[-4:]]
    # the newest unit is kept even over the budget; broken units never
    assert recent_units(units_from_end(msgs), 0, lambda u: 10) == units[-1:]
    assert recent_units(reversed(units[:2]), 10, lambda u: 1) == []
    assert within_budget(units_from_end(msgs), sum(u.tokens for u in units))
    assert not within_budget(units_from_end(msgs), sum(u.tokens for u in units) - 1)


def test_messages_between_a_call_and_its_result_belong_to_its_unit() -> None:
    msgs = [
        Message.user("deploy it"),
        Message.assistant("", [ToolCall("d", "deploy"), ToolCall("n", "notify")]),
        Message.tool("n", "notified"),  # out of order
        Message.user("approved"),  # between the call and its result
        Message.system("note: the deploy is slow"),
        Message.tool("d", "deployed"),  # a turn later
        Message.user("thanks"),
    ]
    units = compaction_units(msgs)
    assert [(u.start, u.end, u.kind) for u in units] == [
        (0, 1, "message"),
        (1, 6, "tool_turn"),
        (6, 7, "message"),
    ]
    # a window of three messages cannot keep the call without its result: it keeps the unit
    assert keep_units(msgs, recent_units(units_from_end(msgs), 3, lambda u: u.size)) == msgs[6:]
    assert keep_units(msgs, recent_units(units_from_end(msgs), 6, lambda u: u.size)) == msgs[1:]


def test_a_reused_id_pairs_each_result_with_the_nearest_call_before_it() -> None:
    call = ToolCall("call_0", "f")
    msgs = [
        Message.assistant("", [call]),
        Message.tool("call_0", "first"),
        Message.tool("call_0", "again"),  # its call is answered already: an orphan
        Message.assistant("", [call]),  # never answered: the next result is the nearer call's
        Message.assistant("", [call]),
        Message.tool("call_0", "second"),
    ]
    units = compaction_units(msgs)
    assert [(u.start, u.end, u.kind, sorted(u.skip)) for u in units] == [
        (0, 2, "tool_turn", []),
        (2, 3, "broken", [2]),
        (3, 4, "broken", [3]),
        (4, 6, "tool_turn", []),
    ]
    assert repair_transcript(msgs)[0] == [msgs[0], msgs[1], msgs[4], msgs[5]]
    # a result a turn later answers the call still waiting
    later = [*msgs, Message.user("and the other?"), Message.tool("call_0", "third")]
    assert [u.kind for u in compaction_units(later)] == ["tool_turn", "broken", "tool_turn"]


def test_an_unanswered_call_takes_its_answered_siblings_with_it() -> None:
    msgs = [
        Message.user("go"),
        Message.assistant("", [ToolCall("a", "f"), ToolCall("b", "g")]),
        Message.user("meanwhile"),
        Message.tool("a", "only a came back"),
        Message.user("and?"),
    ]
    units = compaction_units(msgs)
    assert [(u.start, u.end, u.kind) for u in units] == [
        (0, 1, "message"),
        (1, 4, "message"),  # what is left of it to send is the user message between
        (4, 5, "message"),
    ]
    assert units[1].skip == {1, 3} and list(units[1].indices()) == [2]
    out, repair = repair_transcript(msgs)
    assert out == [msgs[0], msgs[2], msgs[4]]
    assert repair is not None and repair.dropped == (1, 3) and repair.calls == ("a", "b")


def test_walking_back_estimates_only_the_units_it_takes() -> None:
    seen: list[int] = []

    def estimate(ms: Iterable[Message]) -> int:
        ms = list(ms)
        seen.extend(id(m) for m in ms)
        return 10 * len(ms)

    msgs = tool_heavy(1_000)
    kept = recent_units(units_from_end(msgs, estimate), 100, lambda u: u.tokens)
    assert keep_units(msgs, kept) == msgs[-8:]
    assert len(seen) < 20  # the 4,000 older messages were never estimated


class Counting(list):  # type: ignore[type-arg]
    """A transcript that counts how many of its messages were read."""

    reads = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        Counting.reads += 1
        return super().__getitem__(index)


def test_results_far_from_their_call_cost_only_the_distance() -> None:
    msgs = tool_heavy(2_000)
    msgs.insert(len(msgs) - 20, Message.assistant("", [ToolCall("late", "slow")]))
    msgs.append(Message.tool("late", "finally"))
    Counting.reads = 0
    units = units_from_end(Counting(msgs), lambda ms: 0)
    newest = next(units)
    assert (newest.start, newest.end) == (len(msgs) - 22, len(msgs))
    assert Counting.reads < 100


def test_an_orphan_near_the_end_is_read_back_once_and_splits_nothing() -> None:
    clean = tool_heavy(500)
    Counting.reads = 0
    list(units_from_end(Counting(clean), lambda ms: 0))
    reads_clean = Counting.reads
    msgs = [*clean[:-4], Message.tool("gone", "nobody asked"), *clean[-4:]]
    Counting.reads = 0
    units = list(units_from_end(Counting(msgs), lambda ms: 0))
    assert Counting.reads <= reads_clean + len(msgs) + 10  # one more walk back, ids only
    assert units[2].kind == "broken" and units[2].start == len(msgs) - 5
    assert len(units) == 2 * 500 + 2


def test_repair_keeps_a_valid_transcript_as_it_is() -> None:
    msgs = tool_heavy(3)
    out, repair = repair_transcript(msgs)
    assert out == msgs and repair is None
    assert all(a is b for a, b in zip(out, msgs, strict=True))


@pytest.mark.parametrize(
    ("msgs", "pending"),
    [
        ([Message.user("x")], []),
        ([Message.assistant("", [ToolCall("a", "f"), ToolCall("b", "g")])], ["a", "b"]),
        ([Message.assistant("", [ToolCall("a", "f")]), Message.tool("a", "r")], []),
        (
            [
                Message.assistant("", [ToolCall("a", "f"), ToolCall("a", "f")]),
                Message.tool("a", ""),
            ],
            ["a"],
        ),
        # the run moved on past an unanswered call: abandoned, not pending (the repair drops it)
        ([Message.assistant("", [ToolCall("a", "f")]), Message.user("never mind")], []),
    ],
)
def test_pending_calls_are_those_the_run_still_waits_for(
    msgs: list[Message], pending: list[str]
) -> None:
    assert [c.id for c in pending_calls(msgs)] == pending


@settings(max_examples=300, deadline=None)
@given(transcripts())
def test_units_partition_any_transcript_and_every_cut_between_them_is_safe(
    messages: list[Message],
) -> None:
    units = compaction_units(messages)
    ends = [u.end for u in units]
    assert [u.start for u in units] == [0, *ends[:-1]][: len(units)]
    assert ends[-1:] == [len(messages)][: len(ends)]
    assert list(units_from_end(messages)) == units[::-1]
    kept = keep_units(messages, units)
    assert sum(u.tokens for u in units) == estimate_tokens(kept)
    for u in units:
        assert u.skip <= set(range(u.start, u.end))
        assert (u.kind == "broken") == (u.size == 0)
    # the repair is exactly what the units keep, and what it keeps is sendable
    repaired, repair = repair_transcript(messages)
    assert repaired == kept and sendable(repaired)
    assert (repair is None) == sendable(messages)
    # cut at any unit boundary: both sides are sendable, each on its own
    body = [u for u in units if u.kind != "system"]
    for i in range(len(body) + 1):
        assert sendable(keep_units(messages, body[:i]))
        assert sendable(keep_units(messages, body[i:]))


@settings(max_examples=150, deadline=None)
@given(transcripts(faults=False))
def test_a_transcript_without_faults_needs_no_repair(messages: list[Message]) -> None:
    assert sendable(messages)
    assert repair_transcript(messages) == (messages, None)
    assert all(not u.skip for u in compaction_units(messages))


@settings(max_examples=100, deadline=None)
@given(transcripts(), st.integers(0, 400))
def test_recent_units_is_the_newest_run_within_the_budget(
    messages: list[Message], budget: int
) -> None:
    kept = recent_units(units_from_end(messages), budget, lambda u: u.tokens)
    assert all(u.kind in ("message", "tool_turn") for u in kept)
    assert sum(u.tokens for u in kept) <= budget or len(kept) == 1
    body = [u for u in compaction_units(messages) if u.kind in ("message", "tool_turn")]
    assert kept == body[len(body) - len(kept) :]
