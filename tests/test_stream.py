"""Agent.run_stream: the model's events as they arrive, the same chain, one result at the end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pydantic import BaseModel

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import StreamEvent
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

NO_HOOKS = Hooks()


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Plan(BaseModel):
    title: str
    steps: list[str]


async def collect(agent: Agent, task: str) -> list[StreamEvent]:
    return [event async for event in agent.run_stream(task)]


async def test_events_of_every_model_call_then_the_result() -> None:
    call = tool_call("add", '{"a": 2, "b": 3}', "c1")
    model = ScriptedModel([Message.assistant("", [call]), "the sum is five, as computed"])
    agent = Agent("s", model, tools=[add], hooks=NO_HOOKS)
    events = await collect(agent, "add 2 and 3")
    kinds = [e.kind for e in events]
    assert kinds[:2] == ["tool_call", "done"]
    assert kinds[-2:] == ["done", "result"]
    assert kinds.count("done") == 2
    assert events[0].tool_call == call
    text = "".join(e.text for e in events if e.kind == "text")
    assert text == "the sum is five, as computed"
    result = events[-1].result
    assert result.output == text
    assert [m.content for m in result.transcript if m.role == "tool"] == ["5"]
    # the whole chain ran: every streamed call was metered and traced
    assert result.usage.requests == 2
    assert len(model.requests) == 2


async def test_on_event_gets_the_events_run_stream_yields_in_the_call_s_own_task() -> None:
    def script() -> ScriptedModel:
        call = tool_call("add", '{"a": 2, "b": 3}', "c1")
        return ScriptedModel([Message.assistant("", [call]), "five"])

    streamed = await collect(Agent("s", script(), tools=[add], hooks=NO_HOOKS), "add")
    seen: list[tuple[StreamEvent, asyncio.Task[object] | None]] = []
    agent = Agent("s", script(), tools=[add], hooks=NO_HOOKS)
    run = asyncio.ensure_future(
        agent.run("add", on_event=lambda e: seen.append((e, asyncio.current_task())))
    )
    result = await run
    assert [e for e, _ in seen] == [e for e in streamed if e.kind != "result"]
    assert {task for _, task in seen} == {run}
    assert result.output == "five"


async def test_typed_output_streams_partials_that_grow() -> None:
    answer = Plan(title="trip", steps=["pack", "drive", "arrive"]).model_dump_json()
    agent = Agent("s", ScriptedModel([answer]), output=Plan, hooks=NO_HOOKS)
    events = await collect(agent, "plan")
    partials = [e.partial for e in events if e.kind == "partial"]
    assert len(partials) >= 3
    assert partials[-1].steps == ["pack", "drive", "arrive"]
    assert any(len(getattr(p, "steps", None) or []) < 3 for p in partials)
    result = events[-1].result
    assert isinstance(result.output, Plan) and result.output.title == "trip"


class NoDone:
    name = "no-done"

    async def request(self, request: ModelRequest) -> ModelResponse:
        raise AssertionError("run_stream must stream")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield StreamEvent("text", text="half an answ")


async def test_a_stream_without_done_is_an_error_from_the_iterator() -> None:
    agent = Agent("s", NoDone(), hooks=NO_HOOKS)
    with pytest.raises(ProviderResponseError, match="'no-done' ended its stream without"):
        await collect(agent, "go")


async def test_leaving_early_cancels_the_run() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool
    async def slow() -> str:
        """Wait a long time."""
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    model = ScriptedModel([Message.assistant("", [tool_call("slow", "{}", "c1")]), "never"])
    agent = Agent("s", model, tools=[slow], hooks=NO_HOOKS)
    stream = agent.run_stream("go")
    async for event in stream:
        if event.kind == "done":
            break
    await asyncio.wait_for(started.wait(), 10)
    await stream.aclose()
    assert cancelled.is_set()
    assert len(model.requests) == 1  # the second model call never happened
