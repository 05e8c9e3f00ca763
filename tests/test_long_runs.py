"""Long runs: what a run keeps grows with its turns, not with their square, and by little.

Each turn's model request carries the whole transcript so far; a per-turn structure that kept
it (the ``model_call`` span's payload did) makes a run's memory quadratic in its turns, and a
request that copies it makes each turn cost more than the last.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import tracemalloc
from collections.abc import AsyncIterator

import pytest

from agentkit_core import Agent
from agentkit_core import Budget
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import Trace
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import Span
from agentkit_core.plugin import SpanExporter
from agentkit_core.plugin import StreamEvent


def echo(text: str) -> str:
    """Return the text."""
    return text


class OneCallPerTurn:
    """Calls ``echo`` once a turn for ``turns`` turns, then answers; keeps no request.

    (ScriptedModel keeps every request it is sent, which is itself quadratic.)
    """

    name = "one-call-per-turn"

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.calls = 0
        #: Per call when asked (``sizes = []``): the request's length and its own size in bytes.
        self.sizes: list[tuple[int, int]] | None = None
        self.traces: list[Trace] = []

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.sizes is not None:
            self.sizes.append((len(request.messages), sys.getsizeof(request.messages)))
            assert request.ctx is not None
            self.traces.append(request.ctx.trace)
        if self.calls > self.turns:
            return ModelResponse(Message.assistant("done"), Usage(100, 10), "stop", self.name)
        call = ToolCall(f"c{self.calls}", "echo", '{"text": "hello"}')
        return ModelResponse(Message.assistant("", (call,)), Usage(100, 10), "tool_calls", "m")

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError


def _peak_kib(turns: int) -> float:
    """Peak traced memory of one run of ``turns`` tool turns (every span kept, as by default)."""
    agent = Agent(
        "a", OneCallPerTurn(turns), "sys", [echo], max_turns=turns + 1, hooks=Hooks(), exporters=[]
    )
    gc.collect()
    tracemalloc.start()
    try:
        result = asyncio.run(agent.run("go"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.output == "done"
    return peak / 1024


def test_a_runs_peak_memory_grows_linearly_with_its_turns() -> None:
    """From 200 to 400 turns a run adds about what it added from 100 to 200, times two.

    Linear memory makes the ratio 2; the quadratic payload made it 4.
    """
    _peak_kib(20)  # warm-up: imports, caches, schemas
    small, middle, large = (_peak_kib(n) for n in (100, 200, 400))
    ratio = (large - middle) / (middle - small)
    assert ratio < 2.6, (small, middle, large, ratio)


def test_a_run_keeps_a_bounded_amount_per_turn() -> None:
    """From 200 to 400 turns a run's peak grows by a constant a turn: its transcript's messages.

    A tool turn adds two messages (about 0.7 KiB here; a plain loop's dicts take 0.9 KiB). The
    three spans a turn that the run's trace kept took 2.5 KiB more.
    """
    _peak_kib(20)  # warm-up: imports, caches, schemas
    per_turn = (_peak_kib(400) - _peak_kib(200)) / 200
    assert per_turn < 1.2, per_turn


class Ends(SpanExporter):
    def __init__(self) -> None:
        self.ended: list[Span] = []

    def on_end(self, span: Span) -> None:
        self.ended.append(span)


def test_the_trace_of_a_context_the_agent_made_keeps_no_span_but_exporters_see_all() -> None:
    """Nobody can read it after the run; a context passed in keeps every span, as before."""
    for passed in (False, True):
        model, ends = OneCallPerTurn(5), Ends()
        model.sizes = []
        agent = Agent("a", model, "sys", [echo], hooks=Hooks(), exporters=[ends])
        ctx = agent.new_context() if passed else None
        asyncio.run(agent.run("go", ctx=ctx))
        trace = model.traces[0]
        assert all(t is trace for t in model.traces)
        names = [s.name for s in ends.ended]
        assert names.count("model_call") == 6 and names.count("tool_call") == 5
        kept = sorted(s.span_id for s in trace.spans)
        assert kept == (sorted(s.span_id for s in ends.ended) if passed else [])


def test_a_request_does_not_copy_the_transcript() -> None:
    """Every request's messages take the same few bytes, however long the transcript is."""
    model = OneCallPerTurn(50)
    model.sizes = []
    agent = Agent("a", model, "sys", [echo], max_turns=51, hooks=Hooks(), exporters=[])
    assert asyncio.run(agent.run("go")).output == "done"
    lengths = [n for n, _ in model.sizes]
    assert lengths == list(range(2, 2 + 2 * 51, 2))  # system and task, then two a turn
    sizes = {size for _, size in model.sizes}
    assert len(sizes) == 1 and sizes.pop() < 100, model.sizes  # a 100-message tuple: 840


def test_a_requests_messages_stay_what_was_sent() -> None:
    """A view of the transcript behaves as the tuple of what was sent, however the run goes on."""
    seen: list[ModelRequest] = []

    class Keeping(OneCallPerTurn):
        async def request(self, request: ModelRequest) -> ModelResponse:
            seen.append(request)
            return await super().request(request)

    agent = Agent("a", Keeping(3), "sys", [echo], hooks=Hooks(), exporters=[])
    transcript = asyncio.run(agent.run("go")).transcript
    first, last = seen[0].messages, seen[-1].messages
    assert first == tuple(transcript[:2]) and len(first) == 2 and hash(first) == hash(first[:])
    assert last == tuple(transcript[:-1]) and last[-1] is transcript[-2]
    assert list(reversed(first)) == transcript[1::-1] and first + last[2:] == last


def test_a_budgets_estimate_before_each_call_reads_only_the_new_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a token limit every call's prompt is estimated first: the new messages only."""
    from agentkit_core import _tokens

    estimated: list[object] = []
    real = _tokens.estimate_message

    def counting(message: Message) -> int:
        estimated.append(message)
        return real(message)

    monkeypatch.setattr(_tokens, "estimate_message", counting)
    budget = Budget(max_tokens=10**9)
    agent = Agent(
        "a",
        OneCallPerTurn(50),
        "sys",
        [echo],
        hooks=Hooks(),
        exporters=[],
        budget=budget,
        max_turns=51,
    )
    assert asyncio.run(agent.run("go")).output == "done"
    assert len(estimated) <= 2 * 51 + 2, len(estimated)  # each message once (was 2,652)


def test_a_results_repr_shows_the_transcript_by_its_length() -> None:
    """``asyncio.run`` (3.11) reprs the run's result twice; a long run's must stay short."""
    from agentkit_core import AgentResult

    result = AgentResult("done", [Message.user("hello")] * 3000, Usage(), "r1")
    text = repr(result)
    assert text.startswith("AgentResult(output='done', transcript=<3000 messages>, usage=Usage(")
    assert "hello" not in text and text.endswith("agent='')")
    assert repr(AgentResult("x", [Message.user("a")], Usage(), "r")).count("<1 message>") == 1
