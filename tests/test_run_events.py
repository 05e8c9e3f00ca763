"""Agent.run_stream_events: every step of a run as a typed event, complete and in order.

The property test scripts runs with random mixes of tool calls (that succeed, fail, are denied,
name no tool or wait for a person), retried model calls and a guard that stops the run, and
checks the stream against the run's result; the same run through ``run`` and through the
stream leaves the same session.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ProviderError
from agentkit_core import Recorder
from agentkit_core import RunContext
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import agent_tool
from agentkit_core import hookimpl
from agentkit_core import open_sessions
from agentkit_core import tool
from agentkit_core.events import ApprovalRequested
from agentkit_core.events import ChildRunFinished
from agentkit_core.events import ChildRunStarted
from agentkit_core.events import OutputPartial
from agentkit_core.events import Retry
from agentkit_core.events import RunEvent
from agentkit_core.events import RunFailed
from agentkit_core.events import RunFinished
from agentkit_core.events import RunStarted
from agentkit_core.events import RunSuspended
from agentkit_core.events import TextDelta
from agentkit_core.events import ToolCallArgsDelta
from agentkit_core.events import ToolCallReady
from agentkit_core.events import ToolCallStarted
from agentkit_core.events import ToolFinished
from agentkit_core.events import ToolProgress
from agentkit_core.events import ToolStarted
from agentkit_core.events import TurnStarted
from agentkit_core.events import UsageUpdate
from agentkit_core.events import VerdictReported
from agentkit_core.plugin import Guard
from agentkit_core.plugin import GuardDecision
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import retry
from agentkit_core.testing import ScriptedModel

#: A fresh manager for what runs outside a test's fixtures (a Hypothesis test, a
#: parametrize), never the process-wide one.
PM = PluginManager()


@tool
def ok_echo(text: str) -> str:
    """Echo the text."""
    return text


@tool
def ok_fail(text: str) -> str:
    """Always fails."""
    raise RuntimeError(f"failed on {text}")


@tool
def deny_wipe(text: str) -> str:
    """Never runs: the hook denies it."""
    raise AssertionError("a denied call ran")


@tool
def ask_send(text: str) -> str:
    """Waits for a person."""
    return f"sent {text}"


class ByPrefix:
    """Denies ``deny_*`` calls and holds ``ask_*`` calls for a person."""

    AGENTKIT_NAME = "by-prefix"

    @hookimpl
    def agentkit_before_tool_call(self, ctx: Any, call: ToolCall) -> ToolDecision | None:
        if call.name.startswith("deny_"):
            return ToolDecision.deny("never", rule="no-wipe")
        if call.name.startswith("ask_"):
            return ToolDecision.ask("a person decides")
        return None


class StopAt(Guard):
    """Stops the run after turn ``turn`` (0: never)."""

    name = "stop-at"

    def __init__(self, turn: int) -> None:
        self.turn = turn

    def check_turn(self, turn: Any) -> GuardDecision:
        if turn.turn == self.turn:
            return GuardDecision.block("enough turns")
        return GuardDecision.ALLOW


HOOKS = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[ByPrefix()]))
TOOLS = [ok_echo, ok_fail, deny_wipe, ask_send]
CALLS = ("ok_echo", "ok_fail", "deny_wipe", "nope", "bad_json")


@dataclass(frozen=True)
class Turn:
    calls: tuple[str, ...]  # one of CALLS each; an empty turn is the final answer
    failures: int  # retryable errors before the model answers


def script(turns: list[Turn], ask_last: bool) -> list[Any]:
    if ask_last and not turns:  # the held call needs a turn of tool calls
        turns = [Turn(("ok_echo",), 0)]
    steps: list[Any] = []
    for n, turn in enumerate(turns):
        steps += [ProviderError("overloaded", retryable=True)] * turn.failures
        calls = []
        for i, name in enumerate(turn.calls):
            arguments = "{not json" if name == "bad_json" else json.dumps({"text": f"{n}.{i}"})
            calls.append(
                ToolCall(f"c{n}_{i}", "ok_echo" if name == "bad_json" else name, arguments)
            )
        if ask_last and n == len(turns) - 1:
            calls.append(ToolCall(f"c{n}_ask", "ask_send", '{"text": "x"}'))
        steps.append(Message.assistant("", calls) if calls else "all done, thanks")
    if not ask_last:
        steps.append("the final answer, after the tools")
    return steps


def agent(turns: list[Turn], ask_last: bool, stop_at: int) -> Agent:
    return Agent(
        "events",
        ScriptedModel(script(turns, ask_last)),
        tools=TOOLS,
        hooks=HOOKS,
        middlewares=[retry(3, base_delay=0)],
        guards=[StopAt(stop_at)] if stop_at else None,
        max_turns=50,
    )


async def events_of(agent: Agent, task: str, **kwargs: Any) -> list[RunEvent]:
    return [event async for event in agent.run_stream_events(task, **kwargs)]


def check_stream(events: list[RunEvent]) -> None:
    """What holds for every stream: order, pairing, and the final event."""
    seqs = [e.seq for e in events]
    assert seqs == sorted(set(seqs)), "sequence numbers strictly increase"
    assert isinstance(events[0], RunStarted)
    assert [e for e in events if isinstance(e, RunFinished | RunSuspended | RunFailed)] == [
        events[-1]
    ]
    started = [e.call_id for e in events if isinstance(e, ToolStarted)]
    finished = [e.call_id for e in events if isinstance(e, ToolFinished)]
    assert len(started) == len(set(started))
    assert len(finished) == len(set(finished)), "each call finishes once"
    assert set(started) <= set(finished)
    for e in events:
        if isinstance(e, ToolStarted):
            end = next(f for f in events if isinstance(f, ToolFinished) and f.call_id == e.call_id)
            assert end.seq > e.seq
    ready = [e.call.id for e in events if isinstance(e, ToolCallReady)]
    announced = [e.call_id for e in events if isinstance(e, ToolCallStarted)]
    assert announced == ready
    held: set[str] = set()
    if isinstance(events[-1], RunSuspended):  # its last batch waits, whole, for a person
        last = max(i for i, e in enumerate(events) if isinstance(e, TurnStarted))
        held = {e.call.id for e in events[last:] if isinstance(e, ToolCallReady)}
    # every call the model made ends in a tool_finished, except a held batch's
    assert set(ready) - held == set(finished)


turns_strategy = st.lists(
    st.builds(
        Turn,
        st.lists(st.sampled_from(CALLS), max_size=3).map(tuple).filter(bool),
        st.integers(0, 2),
    ),
    max_size=4,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=turns_strategy, ask_last=st.booleans(), stop=st.integers(0, 4))
def test_the_stream_is_complete_ordered_and_ends_with_the_result(
    turns: list[Turn], ask_last: bool, stop: int
) -> None:
    events = asyncio.run(events_of(agent(turns, ask_last, stop), "go"))
    check_stream(events)
    final = events[-1]
    result = final.result  # type: ignore[attr-defined]
    assert final.run_id == result.run_id
    assert all(e.run_id == result.run_id for e in events)
    if result.status == "suspended":
        assert isinstance(final, RunSuspended)
        asked = [e.call.id for e in events if isinstance(e, ApprovalRequested)]
        assert asked == [c.id for c in result.pending] == [c.id for c in final.pending]
    else:
        assert isinstance(final, RunFinished)
    if result.status == "done":
        last_turn = max(i for i, e in enumerate(events) if isinstance(e, TurnStarted))
        text = "".join(e.text for e in events[last_turn:] if isinstance(e, TextDelta))
        assert text == result.output
    retries = [e for e in events if isinstance(e, Retry)]
    turns_run = sum(isinstance(e, TurnStarted) for e in events)
    assert len(retries) == sum(t.failures for t in turns[:turns_run])
    denied = [
        e.verdict.subject_id
        for e in events
        if isinstance(e, VerdictReported) and e.verdict.verdict == "deny"
    ]
    ends = {e.call_id: e for e in events if isinstance(e, ToolFinished)}
    assert all(ends[call].is_error for call in denied if call in ends)
    usage = [e for e in events if isinstance(e, UsageUpdate)]
    assert usage[-1].total.requests == result.usage.requests == len(usage)
    assert usage[-1].total.input_tokens == result.usage.input_tokens


async def session_items(sessions: Sessions, session_id: str) -> list[tuple[str, Any]]:
    """The session's items without what differs between two runs (ids, times, run ids)."""
    path = await sessions.path(session_id)
    out = []
    for item in path[1:]:
        body = json.loads(item.body_json)
        if isinstance(body, dict):
            body.pop("run", None)
        out.append((item.kind, body))
    return out


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=turns_strategy, ask_last=st.booleans())
def test_streamed_and_plain_runs_leave_identical_sessions(
    tmp_path_factory: pytest.TempPathFactory, turns: list[Turn], ask_last: bool
) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('s')}/sessions.sqlite"

    async def both() -> None:
        sessions = await open_sessions(url, manager=PM)
        try:
            records = []
            for streamed in (False, True):
                recorder = await Recorder.start(sessions)
                a = agent(turns, ask_last, 0)
                a.recorder = recorder
                if streamed:
                    events = await events_of(a, "go")
                    check_stream(events)
                    named = {e.item_id for e in events if e.item_id}
                    stored = {i.id for i in await sessions.path(recorder.session_id)}
                    assert named <= stored, "every item an event names is in the session"
                else:
                    await a.run("go")
                records.append(await session_items(sessions, recorder.session_id))
            assert records[0] == records[1]
        finally:
            await sessions.aclose()

    asyncio.run(both())


async def test_a_run_s_events_in_order_with_their_items() -> None:
    calls = [ToolCall("c1", "ok_echo", '{"text": "hi"}')]
    model = ScriptedModel([Message.assistant("", calls), "the echo said hi"])
    a = Agent("seq", model, tools=[ok_echo])
    kinds = [e.kind for e in await events_of(a, "echo hi")]
    assert kinds == [
        "run_started",
        "turn_started",
        "model_request_started",
        "tool_call_started",
        "tool_call_ready",
        "usage",
        "tool_started",
        "tool_finished",
        "turn_started",
        "model_request_started",
        "text_delta",
        "usage",
        "run_finished",
    ]


async def test_events_name_the_session_items_they_wrote(tmp_path: Any, pm) -> None:
    sessions = await open_sessions(f"sqlite:///{tmp_path}/s.sqlite", manager=pm)
    try:
        recorder = await Recorder.start(sessions)
        a = agent([Turn(("deny_wipe",), 0)], False, 0)
        a.recorder = recorder
        events = await events_of(a, "wipe it")
        path = {i.id: i for i in await sessions.path(recorder.session_id)}
        started = events[0]
        assert isinstance(started, RunStarted) and started.session_id == recorder.session_id
        assert path[started.item_id].kind == "user"  # type: ignore[index]
        verdict = next(e for e in events if isinstance(e, VerdictReported))
        assert path[verdict.item_id].kind == "verdict"  # type: ignore[index]
        assert json.loads(path[verdict.item_id].body_json)["call"] == "c0_0"  # type: ignore[index]
        assert events[-1].item_id == list(path)[-1]  # the run ended at the session's leaf
    finally:
        await sessions.aclose()


async def test_a_failed_run_ends_with_run_failed_then_raises() -> None:
    a = Agent("f", ScriptedModel([ProviderError("bad request")]))
    seen: list[RunEvent] = []
    with pytest.raises(ProviderError, match="bad request"):
        async for event in a.run_stream_events("go"):
            seen.append(event)
    assert isinstance(seen[-1], RunFailed)
    assert seen[-1].error_type == "ProviderError" and "bad request" in seen[-1].error


async def test_leaving_the_stream_early_cancels_the_run_and_its_tool() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool
    async def slow(text: str) -> str:
        """Waits."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return text

    model = ScriptedModel([Message.assistant("", [ToolCall("s1", "slow", '{"text": "x"}')])])
    stream = Agent("c", model, tools=[slow]).run_stream_events("go")
    async for event in stream:
        if isinstance(event, ToolStarted):
            break
    await asyncio.wait_for(started.wait(), 10)
    await stream.aclose()  # type: ignore[attr-defined]
    assert cancelled.is_set()


async def test_a_child_agent_s_run_is_in_its_parent_s_stream() -> None:
    child = Agent("helper", ScriptedModel(["the helper's answer"]))
    parent = Agent(
        "boss",
        ScriptedModel(
            [
                Message.assistant("", [ToolCall("h1", "helper", '{"task": "help"}')]),
                "done with help",
            ]
        ),
        tools=[agent_tool(child)],
    )
    events = await events_of(parent, "go")
    check_stream(events)
    begun = next(e for e in events if isinstance(e, ChildRunStarted))
    ended = next(e for e in events if isinstance(e, ChildRunFinished))
    assert begun.agent == ended.agent == "helper"
    assert begun.child_run_id == ended.child_run_id != events[0].run_id
    child_events = [e for e in events if e.run_id == begun.child_run_id]
    assert begun.seq < min(e.seq for e in child_events) <= max(e.seq for e in child_events)
    assert max(e.seq for e in child_events) < ended.seq


async def test_typed_output_streams_partials() -> None:
    class Plan(BaseModel):
        title: str
        steps: list[str]

    text = json.dumps({"title": "trip", "steps": ["pack", "go", "return home"]})
    a = Agent("t", ScriptedModel([text]), output=Plan)
    events = await events_of(a, "plan")
    partials = [e.value for e in events if isinstance(e, OutputPartial)]
    assert partials and partials[-1] == Plan(title="trip", steps=["pack", "go", "return home"])
    assert events[-1].result.output == partials[-1]  # type: ignore[attr-defined]


async def test_a_tool_reports_progress_on_its_call() -> None:
    @tool
    async def work(ctx: RunContext, steps: int) -> str:
        """Works in steps."""
        for n in range(1, steps + 1):
            ctx.report_progress(n, steps, f"step {n}")
        return "worked"

    model = ScriptedModel([Message.assistant("", [ToolCall("w1", "work", '{"steps": 3}')]), "ok"])
    events = await events_of(Agent("p", model, tools=[work]), "go")
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert [(e.call_id, e.progress, e.total, e.message) for e in progress] == [
        ("w1", 1, 3, "step 1"),
        ("w1", 2, 3, "step 2"),
        ("w1", 3, 3, "step 3"),
    ]


async def test_a_slow_consumer_gets_deltas_merged_and_every_step_event() -> None:
    text = "word " * 200
    a = Agent("slow", ScriptedModel([text]))
    stream = a.run_stream_events("go")
    events: list[RunEvent] = []
    async for event in stream:
        events.append(event)
        await asyncio.sleep(0.001)  # behind the run: the deltas wait
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(e.text for e in deltas) == text
    assert len(deltas) < len(text) / 8  # merged: the script streams 8 characters at a time
    check_stream(events)


class Fragments:
    """Streams a call's arguments a character at a time, then answers: never waits."""

    name = "fragments"

    def __init__(self) -> None:
        self.calls = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        if self.calls > 1:
            yield StreamEvent("text", text="done")
            yield StreamEvent("done", response=ModelResponse(Message.assistant("done")))
            return
        call = ToolCall("c1", "add", '{"a": 2, "b": 3}')
        yield StreamEvent("tool_call_delta", tool_call=ToolCall("c1", "add", ""))
        for char in call.arguments:
            yield StreamEvent("tool_call_delta", tool_call=ToolCall("c1", "add", char))
        yield StreamEvent("tool_call", tool_call=call)
        yield StreamEvent("done", response=ModelResponse(Message.assistant("", [call])))


async def test_a_call_s_merged_argument_deltas_follow_its_start_numbered_without_gaps() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    a = Agent("frag", Fragments(), tools=[add])  # type: ignore[arg-type]
    events = [e async for e in a.run_stream_events("go")]
    check_stream(events)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    kinds = [e.kind for e in events if e.kind.startswith("tool_call")]
    # the run never waited: the consumer, behind, got the fragments as one delta
    assert kinds == ["tool_call_started", "tool_call_args_delta", "tool_call_ready"]
    delta = next(e for e in events if isinstance(e, ToolCallArgsDelta))
    assert (delta.call_id, delta.delta) == ("c1", '{"a": 2, "b": 3}')


async def test_one_context_streams_one_run_at_a_time() -> None:
    a = Agent("twice", ScriptedModel(["a", "b"]))
    ctx = a.new_context()
    first = a.run_stream_events("one", ctx=ctx)
    await first.__anext__()  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="streaming its events already"):
        await a.run_stream_events("two", ctx=ctx).__anext__()  # type: ignore[attr-defined]
    await first.aclose()  # type: ignore[attr-defined]


def test_every_event_is_json_ready() -> None:
    calls = [ToolCall("c1", "deny_wipe", '{"text": "x"}')]
    a = Agent("j", ScriptedModel([Message.assistant("", calls), "fine"]), tools=TOOLS, hooks=HOOKS)
    events = asyncio.run(events_of(a, "go"))
    for event in events:
        data = json.loads(json.dumps(event.to_json()))
        assert data["kind"] == event.kind and data["seq"] == event.seq
