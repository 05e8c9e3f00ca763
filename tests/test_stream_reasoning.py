"""'reasoning' stream events: passed through to the caller in order, never parsed as the answer."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent


class Plan(BaseModel):
    title: str
    steps: list[str]


class Interleaved:
    """Streams ``events`` (reasoning and text deltas, any order), then the answer they make."""

    name = "interleaved"

    def __init__(self, events: list[StreamEvent]) -> None:
        self.events = events

    def _response(self) -> ModelResponse:
        text = "".join(e.text for e in self.events if e.kind == "text")
        return ModelResponse(Message.assistant(text), Usage(1, 1, 1), "stop", self.name)

    async def request(self, request: ModelRequest) -> ModelResponse:
        return self._response()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        for event in self.events:
            yield event
        yield StreamEvent("done", response=self._response())


def cut(text: str, at: list[int]) -> list[str]:
    """``text`` in pieces at the offsets ``at``."""
    edges = sorted({0, len(text), *(a % (len(text) + 1) for a in at)})
    return [text[a:b] for a, b in itertools.pairwise(edges)]


@st.composite
def streams(draw: st.DrawFn) -> tuple[Plan, list[StreamEvent]]:
    """A plan's JSON cut into text deltas, with reasoning deltas (JSON-looking ones too) between."""
    plan = Plan(
        title=draw(st.text(max_size=12)), steps=draw(st.lists(st.text(max_size=8), max_size=3))
    )
    text = [
        StreamEvent("text", text=p)
        for p in cut(plan.model_dump_json(), draw(st.lists(st.integers(0, 200), max_size=6)))
    ]
    thought = st.sampled_from(['{"title": "no', "}]", '"', "let me think", ""]) | st.text()
    reasoning = [StreamEvent("reasoning", text=t) for t in draw(st.lists(thought, max_size=6))]
    places = draw(st.permutations(range(len(text) + len(reasoning))))
    merged: list[StreamEvent] = [StreamEvent("text")] * len(places)
    for event, place in zip([*text, *reasoning], places, strict=True):
        merged[place] = event
    # the text deltas keep their order; the reasoning falls anywhere between them
    texts = iter(text)
    return plan, [e if e.kind == "reasoning" else next(texts) for e in merged]


@settings(max_examples=60, deadline=None)
@given(streams())
def test_reasoning_passes_through_run_stream_and_stays_out_of_the_output(
    case: tuple[Plan, list[StreamEvent]],
) -> None:
    plan, sent = case
    agent = Agent("planner", Interleaved(sent), output=Plan, hooks=Hooks())

    async def collect() -> list[StreamEvent]:
        return [event async for event in agent.run_stream("plan")]

    events = asyncio.run(collect())
    model_events = [e for e in events if e.kind in ("text", "reasoning")]
    assert model_events == sent  # every reasoning delta reaches the caller, in its place
    assert events[-1].kind == "result" and events[-1].result.output == plan
    partials = [e.partial for e in events if e.kind == "partial"]
    assert partials, "the text deltas made no partial"
    assert json.loads(partials[-1].model_dump_json()) == plan.model_dump()
