"""Resume at the leaf: a session rebuilds the conversation the loop kept, in any order of events.

The property tests drive real agent runs (answers, tool calls allowed, denied or held for a
person, runs a hook stops, runs left suspended and abandoned, runs approved later) and check
that a recorder opened on the stored session finds exactly what the runs returned.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import SessionNotFound
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import Usage
from agentkit_core import tool
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import NewItem
from agentkit_core.plugin import RecordedInstructions
from agentkit_core.plugin import SessionHeader
from agentkit_core.plugin import SessionState
from agentkit_core.plugin import open_session_store
from agentkit_core.plugin import strip_reasoning
from agentkit_core.testing import ScriptedModel

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


@tool
def ok(n: int) -> str:
    """Succeed."""
    return f"ok {n}"


@tool
def halt(n: int) -> str:
    """Succeed, and make the run stop after this turn."""
    return f"halt {n}"


@tool
def wipe(n: int) -> str:
    """Never allowed."""
    return f"wiped {n}"


@tool
def pay(n: int) -> str:
    """Held for a person's approval."""
    return f"paid {n}"


def policy(ctx: Any, call: ToolCall) -> ToolDecision | None:
    if call.name == "wipe":
        return ToolDecision.deny("never")
    if call.name == "pay":
        return ToolDecision.ask("a person approves payments")
    return None


def stop_after_halt(ctx: Any, turn: Any) -> str | None:
    calls = turn.response.message.tool_calls if turn.response else ()
    return "halted" if any(c.name == "halt" for c in calls) else None


HOOKS = Hooks.of("policy", before_tool_call=policy, should_stop_after_turn=stop_after_halt)

turns = st.lists(
    st.lists(st.sampled_from(["ok", "halt", "wipe", "pay"]), min_size=1, max_size=3),
    max_size=3,
)
runs = st.lists(
    st.tuples(turns, st.sampled_from(["approve", "refuse", "abandon"])), min_size=1, max_size=4
)


class Planned:
    """The model: each request answers with the next planned message of the current run."""

    def __init__(self) -> None:
        self.plan: deque[Message] = deque()
        self.ids = itertools.count()

    def load(self, run: list[list[str]], n: int) -> None:
        self.plan.clear()
        for names in run:
            calls = [ToolCall(f"c{next(self.ids)}", name, f'{{"n": {n}}}') for name in names]
            self.plan.append(Message.assistant("", calls))
        self.plan.append(Message.assistant(f"answer {n}"))

    def step(self, request: ModelRequest) -> Message:
        return self.plan.popleft()


def body(messages: list[Message]) -> list[Message]:
    """A transcript without its leading system messages."""
    i = 0
    while i < len(messages) and messages[i].role == "system":
        i += 1
    return messages[i:]


async def scenario(plan: list[tuple[list[list[str]], str]]) -> None:
    async with Sessions(await open_session_store("memory://", manager=PM)) as sessions:
        planned = Planned()
        recorder = await Recorder.start(sessions, {"model": "planned"})
        agent = Agent(
            "a",
            ScriptedModel([planned.step] * 100, name="planned"),
            "Rules.",
            [ok, halt, wipe, pay],
            hooks=HOOKS,
            recorder=recorder,
        )
        conversation: list[Message] = []
        for n, (run, then) in enumerate(plan):
            planned.load(run, n)
            result = await agent.run(f"task {n}", wc=recorder.working_context())
            while result.status == "suspended":
                state = (await Recorder.resume(sessions, recorder.session_id)).state
                # a new process finds the run, its calls, and the transcript it had
                assert state.run == result.run_id
                assert state.held == result.pending
                assert [c.id for c in state.pending] == [
                    c.id for c in result.transcript[-1].tool_calls
                ]
                assert state.run_transcript(result.run_id) == result.transcript
                if then == "abandon":
                    break
                approvals = {c.id: then == "approve" for c in result.pending}
                result = await agent.resume(result.run_id, approvals)
            if result.status == "suspended":
                continue
            conversation = body(result.transcript)
            resumed = await Recorder.resume(sessions, recorder.session_id)
            assert resumed.state.run is None
            assert resumed.working_context().messages == conversation
        resumed = await Recorder.resume(sessions, recorder.session_id)
        assert resumed.working_context().messages == conversation
        assert resumed.working_context().messages == recorder.working_context().messages
        assert await schema_1_twin(sessions, recorder.session_id) == comparable(resumed.state)


def comparable(state: SessionState) -> SessionState:
    """``state`` without what names its session and items, which a copy does not share."""
    return replace(state, session_id="", leaf=None)


async def schema_1_twin(sessions: Sessions, session_id: str) -> SessionState:
    """The state a schema 1 copy of the session resumes to.

    Schema 1 wrote a ``tool_call`` item after each response, one per call; schema 2 writes
    none. A reader must find the same state in both.
    """
    path = await sessions.path(session_id)
    leaf = await sessions.create(SessionHeader.from_body(path[0].body))
    items = []
    for item in path[1:]:
        items.append(NewItem(item.kind, item.body))
        if item.kind == "response":
            calls = item.body["message"].tool_calls
            items += [NewItem("tool_call", {"call": c.id, "tool": c.name}) for c in calls]
    if items:
        await sessions.append(leaf.session_id, leaf.id, items)
    return comparable((await Recorder.resume(sessions, leaf.session_id)).state)


@settings(max_examples=60, deadline=None)
@given(runs)
def test_the_session_rebuilds_what_the_runs_returned(plan: Any) -> None:
    asyncio.run(scenario(plan))


@given(
    st.lists(st.sampled_from(["model-a", "model-b", None]), max_size=6),
    st.sampled_from(["model-a", "model-b"]),
)
def test_strip_reasoning_keeps_only_the_target_models(producers: Any, target: str) -> None:
    messages = [
        Message(
            "assistant",
            f"m{i}",
            metadata={} if p is None else {REASONING: {"model": p, "text": i}, "other": i},
        )
        for i, p in enumerate(producers)
    ]
    out = strip_reasoning(messages, target)
    assert out == messages  # the content is untouched
    for before, after in zip(messages, out, strict=True):
        kept = before.metadata.get(REASONING, {}).get("model") == target
        assert (REASONING in after.metadata) == kept
        assert after.metadata.get("other") == before.metadata.get("other")
    assert all(REASONING in m.metadata for m in messages if m.metadata)  # inputs unchanged


def test_reasoning_without_its_model_is_never_sent_on() -> None:
    anonymous = Message("assistant", "x", metadata={REASONING: "opaque"})
    assert strip_reasoning([anonymous], "model-a")[0].metadata == {}


@given(
    st.lists(st.text(max_size=5), min_size=1, max_size=8),
    st.data(),
)
def test_a_fold_replaces_exactly_what_it_folded(texts: list[str], data: Any) -> None:
    messages = [
        Message.user(t) if i % 2 == 0 else Message.assistant(t) for i, t in enumerate(texts)
    ]
    start = data.draw(st.integers(0, len(messages) - 1))
    end = data.draw(st.integers(start + 1, len(messages)))
    state = SessionState("s")
    state.feed("user", {"message": messages[0], "source": "task", "run": "r"})
    for m in messages[1:]:
        kind = "user" if m.role == "user" else "response"
        state.feed(kind, {"message": m, "source": "before_turn" if kind == "user" else "repair"})
    summary = Message.user("summary")
    fold = {"start": start, "folded": messages[start:end], "summary": summary}
    state.feed("fold", {"fold": fold})
    state.feed("response", {"message": Message.assistant("done")})
    expected = [*messages[:start], summary, *messages[end:], Message.assistant("done")]
    assert state.working_context().messages == expected


def test_a_failed_fold_or_one_of_messages_not_on_the_path_changes_nothing() -> None:
    state = SessionState("s")
    state.feed("user", {"message": Message.user("q"), "source": "task", "run": "r"})
    state.feed("fold", {"fold": {"folded": [Message.user("q")], "summary": None}})
    state.feed("fold", {"fold": {"folded": [Message.user("other")], "summary": Message.user("s")}})
    state.feed("fold", {"fold": "not a fold"})
    state.feed("response", {"message": Message.assistant("a")})
    assert [m.text for m in state.working_context().messages] == ["q", "a"]


def test_recorded_instructions_round_trip_and_rebuild_their_messages() -> None:
    from agentkit_core.plugin import InstructionPart
    from agentkit_core.plugin import Omission

    recorded = RecordedInstructions(
        "h",
        (
            (InstructionPart("product", "A", "product"), InstructionPart("skills", "B", "skills")),
            (InstructionPart("system.1", "C", "request"),),
        ),
        (Omission("skills", "skills", "/x", "invalid", 3),),
    )
    again = RecordedInstructions.from_body(recorded.to_body())
    assert again == recorded
    assert [m.text for m in again.prefix] == ["A\n\nB", "C"]


async def test_kit_resume_and_fork_errors_name_what_is_wrong(pm) -> None:
    async with Sessions(await open_session_store("memory://", manager=pm)) as sessions:
        with pytest.raises(SessionNotFound, match="no session 'nope' in memory://"):
            await Kit.open(model="test", session=sessions, resume="nope")
        kit = await Kit.open(model=ScriptedModel(["a"]), session=sessions)
        await Agent.from_config(kit.config()).run("q")
        other = await Recorder.start(sessions)
        with pytest.raises(SessionNotFound, match="belongs to session"):
            await Kit.open(model="test", session=sessions, fork=kit.session_id, fork_at=other.leaf)
    with pytest.raises(ConfigError, match=r"'await Kit\.open"):
        Kit(model="test", session="memory://")
    with pytest.raises(ConfigError, match="resume need session="):
        Kit(model="test", resume="x")
    with pytest.raises(ConfigError, match="does not go with fork="):
        Kit(model="test", session="memory://", resume="x", fork="y")
    with pytest.raises(ConfigError, match="pass fork= too"):
        Kit(model="test", session="memory://", fork_at="x")
    with pytest.raises(ConfigError, match="needs the kit's session store"):
        await Kit(model="test").recorder_for("c1")


_COUNT_NAMES = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
_counts = st.dictionaries(
    st.sampled_from([*_COUNT_NAMES, "requests", "other"]),
    st.integers(0, 10**6) | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=2),
    max_size=7,
)


@given(st.lists(st.tuples(st.sampled_from(["p:a", "p:b"]), _counts), max_size=6))
def test_a_run_s_usage_is_the_sum_of_its_responses_int_counts(responses: Any) -> None:
    """Folded into one Usage a response, it is what adding each response's Usage gives."""
    state = SessionState("s", "h")
    state.feed("user", {"message": Message.user("go"), "source": "task", "run": "r"})
    want: dict[str, Usage] = {}
    answer = Message.assistant("", (ToolCall("c", "t", "{}"),))  # the run stays open
    for model, counts in responses:
        state.feed("response", {"message": answer, "model": model, "usage": counts})
        kept = {k: v for k, v in counts.items() if k in _COUNT_NAMES and type(v) is int}
        want[model] = want.get(model, Usage()) + Usage(requests=1, **kept)
    assert state.run_usage == want


_ids = st.sampled_from(["a", "b", "c"])  # few, so calls share ids and results repeat them


@given(st.lists(st.tuples(st.lists(_ids, max_size=3), st.lists(_ids | st.none(), max_size=4))))
def test_the_pending_calls_are_the_last_answer_s_less_every_id_answered_since(
    turns: list[tuple[list[str], list[str | None]]],
) -> None:
    """Fed as the recorder feeds it or replayed: results settle calls by id, in any order."""
    recorded, replayed = SessionState("s", "h"), SessionState("s", "h")
    task = {"message": Message.user("go"), "source": "task", "run": "r"}
    recorded.feed("user", task)
    replayed.feed("user", task)
    for ids, answered in turns:
        answer = Message.assistant("", tuple(ToolCall(i, "t", "{}") for i in ids))
        recorded._responded(answer, "", None, None, False)
        replayed.feed("response", {"message": answer, "model": "m", "usage": None})
        for i in answered:
            result = Message("tool", "", tool_call_id=i)
            recorded._result(result)
            replayed.feed("tool_result", {"message": result})
        want = tuple(c for c in answer.tool_calls if c.id not in answered)
        assert recorded.pending == replayed.pending == want


_count = st.integers(0, 3)  # 0 often: a count not reported is left out of the item


@given(st.lists(st.tuples(st.sampled_from(["p:a", "q"]), st.builds(Usage, *[_count] * 6))))
def test_a_recorded_run_s_usage_is_its_answers_usage_recorded_and_replayed(
    answers: list[tuple[str, Usage]],
) -> None:
    """Each answer a request with its reported counts, in the recorder's state and on replay."""

    async def record() -> None:
        sessions = Sessions(await open_session_store("memory://", manager=PM))
        ctx = Agent("a", "test", hooks=Hooks()).new_context()
        recorder = await Recorder.start(sessions, {"model": "m"})
        recorder.record_user(ctx, Message.user("go"))
        want: dict[str, Usage] = {}
        answer = Message.assistant("", (ToolCall("c", "t", "{}"),))  # the run stays open
        for model, used in answers:
            recorder.record_response(ctx, answer, model=model, usage=used)
            want[model] = want.get(model, Usage()) + replace(used, requests=1)
        await recorder.flush()
        replayed = SessionState.replay("s", await sessions.path(recorder.session_id))
        assert recorder.state.run_usage == replayed.run_usage == want

    asyncio.run(record())
