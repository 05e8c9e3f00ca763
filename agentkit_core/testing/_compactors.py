"""The compactor conformance suite: every rule a compactor keeps, over random transcripts.

A plugin's test subclasses :class:`CompactorConformance` and supplies ``make_compactor``::

    class TestConformance(CompactorConformance):
        def make_compactor(self, budget):
            return TruncationCompactor(max_tokens=max(1, budget))

``budget`` is in estimated tokens (``agentkit_core.plugin.estimate_tokens``), drawn from 0 to twice
the size of the transcript; a compactor whose knob is another unit maps it (a message costs at least
``MESSAGE_OVERHEAD`` tokens, so ``budget // MESSAGE_OVERHEAD`` messages is a window as wide).
At a budget no smaller than the transcript, the compactor must return it unchanged. Override
``make_ctx`` for a compactor that calls a model. Requires hypothesis.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from .._compaction import compaction
from .._compaction import run_compactor
from .._context import RunContext
from .._fold import SUMMARY
from .._messages import Message
from .._messages import ToolCall
from .._models import ModelRequest
from .._models import ModelResponse
from .._run_errors import PendingToolCallError
from .._run_errors import RunError
from .._tokens import estimate_tokens
from .._units import pending_calls
from .._units import repair_transcript
from ._context import make_test_ctx
from ._registrations import check_declared_options

_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=0, max_size=40
)
#: Ids a provider reuses (``call_0`` every turn, or none at all), beside fresh ones.
_REUSED = ("call_0", "call_1", "a", "")


@st.composite
def transcripts(draw: Any, faults: bool = True) -> list[Message]:
    """Random transcripts with every shape a compactor must handle.

    An optional leading system message; user, assistant and system-note messages; assistant
    messages with parallel calls (long arguments, ids reused across turns, unicode) whose
    results arrive later, in any order, with other messages between; and, with ``faults``,
    results that answer no call and calls that no result answers (at the end: still pending).
    """
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(Message.system("You are terse. " + draw(_text)))
    waiting: list[ToolCall] = []
    fresh = 0
    steps = ["user", "assistant", "note", "calls", "calls", "results", "results", "results"]
    for _ in range(draw(st.integers(1, 16))):
        kind = draw(st.sampled_from([*steps, "orphan"] if faults else steps))
        if kind == "user":
            out.append(Message.user(draw(_text) or "?"))
        elif kind == "assistant":
            out.append(Message.assistant(draw(_text) or "."))
        elif kind == "note":
            out.append(Message.system("note: " + draw(_text)))
        elif kind == "calls":
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                fresh += 1
                call_id = draw(st.sampled_from([*_REUSED, f"t{fresh}", f"t{fresh}"]))
                args = json.dumps({"q": draw(_text) * draw(st.sampled_from([1, 1, 50]))})
                calls.append(ToolCall(call_id, draw(st.sampled_from(["search", "read"])), args))
            out.append(Message.assistant(draw(_text), calls))
            waiting.extend(calls)
        elif kind == "results" and waiting:
            answered = draw(st.permutations(waiting))[: draw(st.integers(1, len(waiting)))]
            for call in answered:
                out.append(Message.tool(call.id, draw(_text), name=call.name))
                waiting.remove(call)
        elif kind == "orphan":
            out.append(Message.tool(draw(st.sampled_from([*_REUSED, "gone"])), draw(_text)))
    if not faults or draw(st.booleans()):
        out.extend(Message.tool(c.id, draw(_text), name=c.name) for c in waiting)
    return out


def check_sendable(messages: Sequence[Message]) -> None:
    """No tool result without an earlier call it answers, no call without a later result.

    Pairs are counted per id, so whatever sits between a call and its result is fine. Raises
    AssertionError naming the first fault.
    """
    waiting: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.role == "tool":
            if not waiting.get(m.tool_call_id or ""):
                raise AssertionError(
                    f"message {i}, a tool result for {m.tool_call_id!r}, answers no earlier call"
                )
            waiting[m.tool_call_id or ""] -= 1
        for call in m.tool_calls:
            waiting[call.id] = waiting.get(call.id, 0) + 1
    left = sorted(k for k, n in waiting.items() if n)
    if left:
        raise AssertionError(f"calls {left} have no result after them")


def check_invariants(before: Sequence[Message], after: Sequence[Message]) -> None:
    """The rules every compacted transcript keeps; raises AssertionError naming the broken one.

    A transcript returned unchanged is exempt from being sendable (the ``compaction()``
    middleware repairs what the input already broke); one the compactor shortened must be.
    """
    assert after or not before, "a compactor returned no messages"
    if len(after) == len(before) and all(a is b for a, b in zip(after, before, strict=True)):
        return
    if before and before[0].role == "system":
        assert after[0] is before[0], "the leading system message was dropped or altered"
    check_sendable(after)
    check_subsequence(before, after)
    check_newest_user_kept(before, after)


def check_newest_user_kept(before: Sequence[Message], after: Sequence[Message]) -> None:
    """The newest user message (the question being answered) survives compaction."""
    newest = next((m for m in reversed(before) if m.role == "user"), None)
    assert newest is None or any(m is newest for m in after), (
        "the newest user message was dropped: the model would answer without the question"
    )


def check_subsequence(before: Sequence[Message], after: Sequence[Message]) -> None:
    """``after`` is ``before`` with messages left out, summaries aside (compared by identity)."""
    it = iter(before)
    originals = [m for m in after if m.metadata.get("compaction") != SUMMARY]
    assert all(any(m is b for b in it) for m in originals), (
        "the result is not the input with messages left out (and summaries added)"
    )


# differing_executors: the @given tests live here and run once per subclass, by design.
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.differing_executors]


class CompactorConformance:
    """Subclass in a test module (``TestX(CompactorConformance)``) and define make_compactor."""

    def make_compactor(self, budget: int) -> Any:
        raise NotImplementedError("define make_compactor(self, budget) in the test class")

    def make_ctx(self, messages: list[Message]) -> RunContext:
        """The run context the compactor gets; override to give it a model."""
        return make_test_ctx()

    def test_declared_options_are_taken_by_the_factory(self) -> None:
        check_declared_options(self.make_compactor(1000))

    def _compact(self, budget: int, messages: list[Message]) -> list[Message]:
        """The compactor's result for ``messages``, given as the middleware gives them."""
        compactor = self.make_compactor(budget)
        ctx = self.make_ctx(messages)
        return list(asyncio.run(run_compactor(compactor, tuple(messages), ctx)))

    def _sent(self, budget: int, messages: list[Message]) -> list[Message]:
        """What the ``compaction()`` middleware sends for ``messages``."""
        sent: list[ModelRequest] = []

        async def model(request: ModelRequest) -> ModelResponse:
            sent.append(request)
            return ModelResponse(Message.assistant("ok"))

        request = ModelRequest(tuple(messages), ctx=self.make_ctx(messages))
        asyncio.run(compaction(self.make_compactor(budget)).wrap_model(request, model))
        return list(sent[0].messages)

    @settings(max_examples=60, deadline=None, suppress_health_check=_SUPPRESSED)
    @given(transcripts(), st.floats(0, 2))
    # Only results that answer no call: nothing can be sent, and nothing is still a transcript.
    @example([Message.tool("gone", ""), Message.tool("a", "")], 0.0)
    @example([Message.system("s"), Message.tool("gone", ""), Message.tool("gone", "")], 0.0)
    def test_at_every_budget_a_compacted_transcript_keeps_every_rule(
        self, messages: list[Message], fraction: float
    ) -> None:
        budget = int(estimate_tokens(messages) * fraction)
        check_invariants(messages, self._compact(budget, messages))

    @settings(max_examples=40, deadline=None, suppress_health_check=_SUPPRESSED)
    @given(transcripts(), st.floats(1, 2))
    def test_at_a_budget_the_transcript_fits_it_comes_back_unchanged(
        self, messages: list[Message], fraction: float
    ) -> None:
        budget = math.ceil(estimate_tokens(messages) * fraction)
        assert self._compact(budget, messages) == messages

    @settings(max_examples=60, deadline=None, suppress_health_check=_SUPPRESSED)
    @given(transcripts(), st.floats(0, 2))
    def test_through_the_middleware_every_request_is_sendable(
        self, messages: list[Message], fraction: float
    ) -> None:
        budget = int(estimate_tokens(messages) * fraction)
        if pending_calls(messages) or (messages and not repair_transcript(messages)[0]):
            refused = PendingToolCallError if pending_calls(messages) else RunError
            try:
                self._sent(budget, messages)
            except refused:
                return
            raise AssertionError("a request with pending calls, or nothing sendable, was sent")
        sent = self._sent(budget, messages)
        assert sent or not messages, "the middleware sent no messages"
        check_sendable(sent)
        check_subsequence(messages, sent)
        if messages and messages[0].role == "system":
            assert sent[0] is messages[0], "the leading system message was dropped or altered"

    def test_a_long_transcript_is_actually_shortened(self) -> None:
        messages = [Message.system("sys")]
        for i in range(40):
            messages.append(Message.user(f"question {i} " + "x" * 200))
            call = ToolCall(f"c{i}", "search", json.dumps({"q": "y" * 300}))
            messages.append(Message.assistant("", [call]))
            messages.append(Message.user("go ahead"))  # between the call and its result
            messages.append(Message.tool(f"c{i}", "z" * 200, name="search"))
        after = self._compact(estimate_tokens(messages) // 40, messages)
        check_invariants(messages, after)
        assert len(after) < len(messages)
        assert after[-1] is messages[-1] or after[-1].metadata.get("compaction") == SUMMARY
