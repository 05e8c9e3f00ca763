"""The compactor conformance suite: every rule a compactor keeps, over random transcripts.

A plugin's test subclasses :class:`CompactorConformance` and supplies ``make_compactor``::

    class TestConformance(CompactorConformance):
        def make_compactor(self, tight):
            return TruncationCompactor(max_tokens=40 if tight else 10**9)

``tight=True`` must give a compactor that compacts the generated transcripts; ``tight=False``
one whose threshold they never reach. Override ``make_ctx`` for a compactor that calls a model.
Requires hypothesis.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from .._compaction import SUMMARY
from .._context import RunContext
from .._messages import Message
from .._messages import ToolCall
from ._context import make_test_ctx

_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=0, max_size=40
)


@st.composite
def _tool_turn(draw: Any, prefix: str) -> list[Message]:
    n = draw(st.integers(1, 3))  # parallel calls
    calls = [
        ToolCall(
            f"{prefix}_{i}",
            draw(st.sampled_from(["search", "read", "write"])),
            json.dumps({"q": draw(_text) * draw(st.sampled_from([1, 1, 50]))}),
        )
        for i in range(n)
    ]
    results = [Message.tool(c.id, draw(_text), name=c.name) for c in calls]
    return [Message.assistant(draw(_text), calls), *results]


@st.composite
def transcripts(draw: Any) -> list[Message]:
    """Random transcripts with every shape a compactor must handle.

    Optional system message, leading orphan tool results, user and assistant messages, tool
    turns with parallel calls and long arguments, unicode.
    """
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(Message.system("You are terse. " + draw(_text)))
    if draw(st.integers(0, 4)) == 0:
        out.append(Message.tool("gone_1", draw(_text), name="search"))
        out.append(Message.tool("gone_2", draw(_text), name="read"))
    for i in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "tool_turn", "tool_turn"]))
        if kind == "tool_turn":
            out.extend(draw(_tool_turn(f"t{i}")))
        elif kind == "user":
            out.append(Message.user(draw(_text) or "?"))
        else:
            out.append(Message.assistant(draw(_text) or "."))
    return out


def check_invariants(before: list[Message], after: list[Message]) -> None:
    """The rules every compacted transcript keeps; raises AssertionError naming the broken one."""
    assert after, "a compactor returned no messages"
    if after == before:
        return  # unchanged: whatever the input already broke is not the compactor's doing
    if before and before[0].role == "system":
        assert after[0] == before[0], "the leading system message was dropped or altered"
    for i, msg in enumerate(after):
        if msg.role == "assistant" and msg.tool_calls:
            ids = [c.id for c in msg.tool_calls]
            following = [m.tool_call_id for m in after[i + 1 : i + 1 + len(ids)]]
            assert sorted(following, key=str) == sorted(ids), (
                f"assistant message {i} with calls {ids} is not followed by all its results"
            )
        if msg.role == "tool":
            j = i - 1
            while j >= 0 and after[j].role == "tool":
                j -= 1
            owner = after[j] if j >= 0 else None
            assert (
                owner is not None
                and owner.role == "assistant"
                and any(c.id == msg.tool_call_id for c in owner.tool_calls)
            ), f"tool result {msg.tool_call_id!r} is separated from the call that requested it"
    originals = [m for m in after if m.metadata.get("compaction") != SUMMARY]
    it = iter(before)
    assert all(any(m is b for b in it) for m in originals), (
        "the result is not the input with messages left out (and summaries added)"
    )


# differing_executors: the @given tests live here and run once per subclass, by design.
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.differing_executors]


class CompactorConformance:
    """Subclass in a test module (``TestX(CompactorConformance)``) and define make_compactor."""

    def make_compactor(self, tight: bool) -> Any:
        raise NotImplementedError("define make_compactor(self, tight) in the test class")

    def make_ctx(self, messages: list[Message]) -> RunContext:
        """The run context the compactor gets; override to give it a model."""
        return make_test_ctx()

    def _compact(self, tight: bool, messages: list[Message]) -> list[Message]:
        compactor = self.make_compactor(tight)
        result: list[Message] = asyncio.run(
            compactor.compact(list(messages), self.make_ctx(messages))
        )
        return result

    @settings(max_examples=60, deadline=None, suppress_health_check=_SUPPRESSED)
    @given(transcripts())
    def test_under_threshold_returns_the_transcript_unchanged(
        self, messages: list[Message]
    ) -> None:
        assert self._compact(False, messages) == messages

    @settings(max_examples=60, deadline=None, suppress_health_check=_SUPPRESSED)
    @given(transcripts())
    def test_compacted_transcripts_keep_every_rule(self, messages: list[Message]) -> None:
        check_invariants(messages, self._compact(True, messages))

    def test_a_long_transcript_is_actually_shortened(self) -> None:
        messages = [Message.system("sys")]
        for i in range(40):
            messages.append(Message.user(f"question {i} " + "x" * 200))
            call = ToolCall(f"c{i}", "search", json.dumps({"q": "y" * 300}))
            messages.append(Message.assistant("", [call]))
            messages.append(Message.tool(f"c{i}", "z" * 200, name="search"))
        after = self._compact(True, messages)
        check_invariants(messages, after)
        assert len(after) < len(messages)
        assert after[-1] is messages[-1] or after[-1].metadata.get("compaction") == SUMMARY
