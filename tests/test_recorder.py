"""The recorder: what a run writes into its session, kind by kind, and the null recorder."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
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
from agentkit_core import RunContext
from agentkit_core import SessionConflict
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import tool
from agentkit_core._messages import TranscriptView
from agentkit_core.content import TextPart
from agentkit_core.plugin import EncodingError
from agentkit_core.plugin import NullRecorder
from agentkit_core.plugin import SessionItem
from agentkit_core.plugin import WorkingContext
from agentkit_core.plugin import open_session_store
from agentkit_core.testing import ScriptedModel


@pytest.fixture
async def sessions(pm) -> Any:
    async with Sessions(await open_session_store("memory://", manager=pm)) as opened:
        yield opened


async def path_of(sessions: Sessions, session_id: str) -> list[SessionItem]:
    return await sessions.path(session_id)


def of_kind(path: list[SessionItem], kind: str) -> list[Any]:
    return [i.body for i in path if i.kind == kind]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def wipe(path: str) -> str:
    """Delete a path."""
    return f"wiped {path}"


@tool
async def ask_name(ctx: RunContext) -> str:
    """Ask the person for their name."""
    return f"hello {await ctx.elicit('Your name?', {'type': 'string'})}"


@tool
def note(ctx: RunContext, text: str) -> str:
    """Record a note under a plugin's own kind."""
    ctx.recorder.record(ctx, "notes/note", {"text": text})
    return "noted"


def calls(*specs: tuple[str, str, str]) -> Message:
    return Message.assistant("", [ToolCall(i, name, args) for i, name, args in specs])


def refuse_wipe(ctx: Any, call: ToolCall) -> ToolDecision | None:
    return ToolDecision.deny("never delete") if call.name == "wipe" else None


async def person(question: str, schema: Any, secret: bool) -> str:
    return "hunter2" if secret else "ann"


async def test_each_kind_is_recorded_with_its_body(sessions: Sessions) -> None:
    model = ScriptedModel(
        [
            calls(("c1", "add", '{"a": 2, "b": 3}'), ("c2", "wipe", '{"path": "/"}')),
            calls(("c3", "ask_name", "{}"), ("c4", "note", '{"text": "tea"}')),
            "all done",
        ]
    )
    kit = await Kit.open(
        model=model,
        instructions="Be brief.",
        tools=[add, wipe, ask_name, note],
        before_tool_call=refuse_wipe,
        before_turn=lambda ctx, info: [Message.user("(turn 1)")] if info.turn == 1 else None,
        session=sessions,
        header={"metadata": {"product": "test"}},
    )
    agent = Agent.from_config(kit.config(), elicitor=person)
    result = await agent.run("work")
    assert result.output == "all done"
    path = await path_of(sessions, kit.session_id)
    run = result.run_id
    assert [i.kind for i in path] == [
        "header",
        "user",  # the task
        "user",  # the before_turn hook's message
        "instructions",
        "response",
        "verdict",
        "tool_result",
        "tool_result",
        "response",
        "elicitation",
        "notes/note",
        "tool_result",
        "tool_result",
        "response",
    ]
    [header] = of_kind(path, "header")
    assert header["model"] == "scripted"
    assert header["metadata"] == {"product": "test"}
    assert header["kit_fingerprint"] == kit.fingerprint()
    assert header["cwd"] == str(Path.cwd())
    task, hooked = of_kind(path, "user")
    assert (task["message"].text, task["source"], task["run"]) == ("work", "task", run)
    assert (hooked["message"].text, hooked["source"]) == ("(turn 1)", "before_turn")
    [instructions] = of_kind(path, "instructions")
    assert instructions["parts"] == [
        {"id": "product", "text": "Be brief.", "source": "product", "message": 0}
    ]
    assert instructions["omitted"] == []
    first = of_kind(path, "response")[0]
    assert first["model"] == "scripted"
    assert first["message"].tool_calls[1] == ToolCall("c2", "wipe", '{"path": "/"}')
    assert first["finish_reason"] == "tool_calls"
    assert set(first["usage"]) == {"input_tokens", "output_tokens"}
    assert first["source"] == "model"
    assert of_kind(path, "tool_call") == []  # a call is in its response's message only
    [verdict] = of_kind(path, "verdict")  # the bare allow of c1 is not recorded
    assert verdict == {
        "namespace": "hook",
        "hook": "before_tool_call",
        "decision": "deny",
        "reason": "never delete",
        "source": "user",
        "rule": "",
        "call": "c2",
        "tool": "wipe",
        "run": run,
    }
    results = [b["message"] for b in of_kind(path, "tool_result")]
    assert [(m.tool_call_id, m.is_error) for m in results] == [
        ("c1", False),
        ("c2", True),
        ("c3", False),
        ("c4", False),
    ]
    assert "denied by user" in results[1].text
    [asked] = of_kind(path, "elicitation")
    assert asked == {
        "question": "Your name?",
        "schema": {"type": "string"},
        "secret": False,
        "answer": "ann",
        "by": f"{__name__}.person",
        "error": None,
        "run": run,
    }
    assert of_kind(path, "notes/note") == [{"text": "tea", "run": run}]


async def test_a_stop_verdict_names_the_hook_and_ends_the_run(sessions: Sessions) -> None:
    model = ScriptedModel([calls(("c1", "add", '{"a": 1, "b": 1}'))])
    agent = Agent(
        "a",
        model,
        "p",
        [add],
        hooks=Hooks.of("budget-plugin", should_stop_after_turn=lambda ctx, turn: "enough"),
        recorder=await Recorder.start(sessions),
    )
    result = await agent.run("go")
    assert result.status == "stopped"
    path = await path_of(sessions, agent.recorder.session_id)
    [stop] = of_kind(path, "verdict")
    assert (stop["hook"], stop["decision"], stop["reason"], stop["source"]) == (
        "should_stop_after_turn",
        "stop",
        "enough",
        "budget-plugin",
    )
    # a stopped run is finished: its messages are the conversation, nothing is in progress
    assert agent.recorder.state.run is None
    assert [m.role for m in agent.recorder.working_context().messages] == [
        "user",
        "assistant",
        "tool",
    ]


async def test_an_elicitor_that_fails_is_recorded_with_its_error(sessions: Sessions) -> None:
    async def declines(question: str, schema: Any, secret: bool) -> str:
        raise RuntimeError("the person went away")

    agent = Agent(
        "a",
        ScriptedModel([calls(("c1", "ask_name", "{}")), "ok"]),
        "",
        [ask_name],
        elicitor=declines,
        recorder=await Recorder.start(sessions),
    )
    await agent.run("go")
    [asked] = of_kind(await path_of(sessions, agent.recorder.session_id), "elicitation")
    assert asked["answer"] is None
    assert asked["error"] == "RuntimeError: the person went away"
    assert asked["by"].endswith("declines")


async def test_instructions_are_recorded_once_per_distinct_render(
    sessions: Sessions, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    (skills / "triage").mkdir(parents=True)
    (skills / "triage" / "SKILL.md").write_text("---\nname: triage\ndescription: Sort\n---\nx")
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no frontmatter")
    model = ScriptedModel([calls(("c1", "add", '{"a": 1, "b": 2}')), "3", "again", "more"])
    kit = await Kit.open(
        model=model,
        instructions="Be brief.",
        tools=[add],
        parts={"skills": {"dirs": [skills]}},
        session=sessions,
    )
    agent = Agent.from_config(kit.config())
    await agent.run("1+2", wc=kit.working_context())
    await agent.run("again", wc=kit.working_context())
    path = await path_of(sessions, kit.session_id)
    [recorded] = of_kind(path, "instructions")  # three requests, one render
    assert [(p["id"], p["source"]) for p in recorded["parts"]] == [
        ("product", "product"),
        ("skills", "skills"),
    ]
    assert [o["what"] for o in recorded["omitted"]] == [str(skills / "broken" / "SKILL.md")]
    assert "Be brief." in recorded["parts"][0]["text"]
    # a changed render is recorded again, as the parts that changed
    (skills / "review").mkdir()
    (skills / "review" / "SKILL.md").write_text("---\nname: review\ndescription: Read\n---\ny")
    kit.reload_parts()
    await Agent.from_config(kit.config()).run("more", wc=kit.working_context())
    first, second = of_kind(await path_of(sessions, kit.session_id), "instructions")
    assert first["hash"] != second["hash"]
    assert (second["base"], second["order"]) == (first["hash"], ["product", "skills"])
    assert [p["id"] for p in second["changed"]] == ["skills"]
    assert "review" in second["changed"][0]["text"]
    assert "omitted" not in second  # the same as the render's before
    # a recorder resumed on the same render does not record it again
    again = await Kit.open(
        model=ScriptedModel(["fine"]),
        instructions="Be brief.",
        tools=[add],
        parts={"skills": {"dirs": [skills]}},
        session=sessions,
        resume=kit.session_id,
    )
    await Agent.from_config(again.config()).run("still there?", wc=again.working_context())
    assert len(of_kind(await path_of(sessions, kit.session_id), "instructions")) == 2


async def test_instructions_a_hook_rewrote_are_recorded_as_sent(sessions: Sessions) -> None:
    def rewrite(ctx: Any, request: Any) -> Any:
        system = Message.system(request.messages[0].text + " Today is Monday.")
        return dataclasses.replace(request, messages=(system, *request.messages[1:]))

    kit = await Kit.open(
        model=ScriptedModel(["ok"]),
        instructions="Be brief.",
        before_model_call=rewrite,
        session=sessions,
    )
    await Agent.from_config(kit.config()).run("hi")
    [recorded] = of_kind(await path_of(sessions, kit.session_id), "instructions")
    # not the kit's parts any more: the text the model was sent, as one part
    assert recorded["parts"] == [
        {
            "id": "instructions",
            "text": "Be brief. Today is Monday.",
            "source": "prompt",
            "message": 0,
        }
    ]


async def test_a_child_agents_run_is_a_linked_session(sessions: Sessions) -> None:
    child = Agent("helper", ScriptedModel(["child answer"], name="small"), "Help.")
    parent_model = ScriptedModel([calls(("c1", "helper", '{"task": "help me"}')), "done"])
    kit = await Kit.open(model=parent_model, agents=[child], session=sessions)
    await Agent.from_config(kit.config()).run("go")
    path = await path_of(sessions, kit.session_id)
    [link] = of_kind(path, "child")
    assert link["agent"] == "helper"
    child_path = await path_of(sessions, link["session"])
    header = child_path[0].body
    assert header["model"] == "small"
    assert header["metadata"]["parent"] == {
        "session": kit.session_id,
        "run": link["run"],
        "agent": "helper",
    }
    assert [i.kind for i in child_path] == ["header", "user", "instructions", "response"]
    assert child_path[1].body["message"].text == "help me"
    assert of_kind(path, "tool_result")[0]["message"].text.count("child answer") == 1


async def test_without_a_session_nothing_is_recorded(sessions: Sessions) -> None:
    agent = Agent("a", ScriptedModel([calls(("c1", "ask_name", "{}")), "ok"]), "p", [ask_name])
    ctx = agent.new_context()
    assert isinstance(ctx.recorder, NullRecorder) and not ctx.recorder.enabled
    result = await Agent("a", ScriptedModel(["ok"]), "p", [ask_name], elicitor=person).run("x")
    assert result.output == "ok"
    null = NullRecorder()
    assert null.session_id == "" and null.leaf is None and not null.tainted
    assert null.working_context("any") == WorkingContext()
    other = await Recorder.start(sessions)
    assert await null.child(ctx, "helper", default=other) is other
    assert await null.child(ctx, "helper") is null
    null.record(ctx, "x/y", {"a": 1})
    null.record_fold(ctx, {"folded": []})
    await null.flush()
    assert (await sessions.sessions())[0].count == 1  # the header `other` wrote, nothing else
    kit = Kit(model="test")
    assert kit.session_id == "" and isinstance(kit.recorder, NullRecorder)
    assert kit.working_context() == WorkingContext()
    with pytest.raises(ConfigError, match="no session to read it from"):
        null.run_transcript("r1")


async def test_two_runs_on_one_recorder_at_once_are_refused(sessions: Sessions) -> None:
    release = asyncio.Event()

    @tool
    async def slow() -> str:
        """Wait."""
        await release.wait()
        return "slow done"

    recorder = await Recorder.start(sessions)
    agent = Agent(
        "a", ScriptedModel([calls(("c1", "slow", "{}")), "one"]), "", [slow], recorder=recorder
    )
    first = asyncio.ensure_future(agent.run("first"))
    while not recorder.state.pending:
        await asyncio.sleep(0)
    other = Agent("b", ScriptedModel(["two"]), "", recorder=recorder)
    ctx = other.new_context()
    with pytest.raises(SessionConflict, match=rf"recording run '\w+'; run '{ctx.run_id}'"):
        await other.run("second", ctx=ctx)
    release.set()
    assert (await first).output == "one"
    path = await path_of(sessions, recorder.session_id)
    texts = [i.body["message"].text for i in path if i.kind in ("user", "response")]
    assert texts == ["first", "", "one"]
    # once the first run ended, the recorder takes the next
    assert (await Agent("c", ScriptedModel(["three"]), "", recorder=recorder).run("third")).output


async def test_another_writer_moving_the_session_on_fails_the_run_before_the_model(
    sessions: Sessions,
) -> None:
    recorder = await Recorder.start(sessions)
    model = ScriptedModel(["never"])
    agent = Agent("a", model, "", recorder=recorder)
    mover = await Recorder.resume(sessions, recorder.session_id)
    mover.record_user(None, Message.user("from elsewhere"))
    await mover.flush()
    with pytest.raises(SessionConflict, match=recorder.session_id) as caught:
        await agent.run("mine")
    assert caught.value.session_id == recorder.session_id
    assert model.requests == []  # the conflict came before the model call
    path = await path_of(sessions, recorder.session_id)
    assert [i.body["message"].text for i in path[1:]] == ["from elsewhere"]
    await recorder.flush()  # the lost batch was dropped: nothing is retried over the new leaf


async def test_an_unencodable_value_names_its_path_and_writes_nothing(sessions: Sessions) -> None:
    async def odd(question: str, schema: Any, secret: bool) -> object:
        return object()

    @tool
    async def ask(ctx: RunContext) -> str:
        """Ask."""
        await ctx.elicit("Anything?")
        return "asked"

    recorder = await Recorder.start(sessions)
    agent = Agent(
        "a",
        ScriptedModel([calls(("c1", "ask", "{}")), "ok"]),
        "",
        [ask],
        elicitor=odd,
        recorder=recorder,
    )
    with pytest.raises(EncodingError, match=r'body\["answer"\]') as caught:
        await agent.run("go")
    assert caught.value.path == 'body["answer"]'
    assert recorder.session_id in str(caught.value)
    kinds = [i.kind for i in await path_of(sessions, recorder.session_id)]
    # the response was written before its call ran (the batch marked in flight); of the batch
    # that holds the answer, nothing
    assert kinds == ["header", "user", "response"]


async def test_a_plugin_kind_must_be_namespaced_and_is_refused_where_recorded(
    sessions: Sessions,
) -> None:
    """``record`` refuses an unknown kind itself: nothing is buffered, the flushes after go on."""
    recorder = await Recorder.start(sessions)
    with pytest.raises(ConfigError, match="unknown session item kind 'whatever'"):
        recorder.record(None, "whatever", {"x": 1})
    recorder.record(None, "acme/event", {"x": 2})
    await recorder.flush()
    assert [i.kind for i in await sessions.path(recorder.session_id)] == ["header", "acme/event"]


@dataclasses.dataclass(frozen=True)
class Fold:
    """The shape of compaction's fold record."""

    start: int
    folded: tuple[Message, ...]
    summary: Message | None
    tokens_before: int
    tokens_after: int
    error: str | None = None


async def test_a_fold_is_recorded_and_resuming_puts_its_summary_in_place(
    sessions: Sessions,
) -> None:
    folds: list[Fold] = []

    def fold(ctx: RunContext, transcript: list[Message]) -> list[Message] | None:
        if len(transcript) < 5 or folds:
            return None
        head, old, rest = transcript[:1], transcript[1:4], transcript[4:]
        summary = Message.user("Summary: added twice.")
        folds.append(Fold(1, tuple(old), summary, 100, 20))
        ctx.recorder.record_fold(ctx, folds[-1])
        ctx.recorder.record_fold(ctx, Fold(1, (), None, 20, 20, "nothing to fold"))
        return [*head, summary, *rest]

    recorder = await Recorder.start(sessions)
    model = ScriptedModel(
        [calls(("c1", "add", '{"a": 1, "b": 1}')), calls(("c2", "add", '{"a": 2, "b": 2}')), "4"]
    )
    hooks = Hooks.of("compaction", transform=fold)
    agent = Agent("a", model, "sys", [add], hooks=hooks, recorder=recorder)
    await agent.run("go")
    path = await path_of(sessions, recorder.session_id)
    done, failed = of_kind(path, "fold")
    assert done["fold"]["summary"].text == "Summary: added twice."
    assert [m.role for m in done["fold"]["folded"]] == ["user", "assistant", "tool"]
    assert failed["fold"]["error"] == "nothing to fold" and failed["fold"]["summary"] is None
    resumed = await Recorder.resume(sessions, recorder.session_id)
    texts = [m.text for m in resumed.working_context().messages]
    assert texts[0] == "Summary: added twice."
    assert texts[-1] == "4"
    assert resumed.working_context().messages == recorder.working_context().messages


#: A request's leading system messages: each a text and how the message is made (the object the
#: last request sent with that text, a new equal one, a new one with other metadata, or one of
#: the same text in two parts), and the shape of the request's messages.
PREFIXES = st.lists(
    st.tuples(
        st.lists(
            st.tuples(
                st.sampled_from(["a", "b", "a\nb"]),
                st.sampled_from(["same", "new", "meta", "parts"]),
            )
        ),
        st.sampled_from([list, tuple, TranscriptView]),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(requests=PREFIXES)
def test_instructions_are_recorded_when_their_texts_change(
    requests: list[tuple[list[tuple[str, str]], Any]],
) -> None:
    """A render is recorded exactly when its texts differ from the render in force.

    The requests' system messages are the very objects of the last request, equal new ones, new
    ones other in what is not text, or text parts: none of that decides, only the texts do.
    """

    async def recorded() -> list[tuple[int, tuple[str, ...] | None]]:
        sessions = Sessions(await open_session_store("memory://", manager=PluginManager()))
        recorder = await Recorder.start(sessions)
        made: dict[tuple[int, str], Message] = {}
        seen = []
        for prefix, shape in requests:
            lead = []
            for i, (text, how) in enumerate(prefix):
                if how == "same" and (i, text) in made:
                    message = made[(i, text)]
                elif how == "parts":
                    halves = ({"type": "text", "text": text[:1]}, TextPart(text[1:]))
                    message = made[(i, text)] = Message("system", halves)
                else:
                    meta = {"n": len(seen)} if how == "meta" else {}
                    message = made[(i, text)] = Message("system", text, metadata=meta)
                lead.append(message)
            sent = shape([*lead, Message.user("go"), Message.system("x")])
            recorder.record_instructions(None, sent)
            await recorder.flush()
            path = await sessions.path(recorder.session_id)
            force = recorder.state.instructions
            texts = None if force is None else tuple(m.text for m in force.prefix)
            seen.append((sum(i.kind == "instructions" for i in path), texts))
        return seen

    expected, count, force = [], 0, None
    for prefix, _ in requests:
        texts = tuple(t for t, _ in prefix)
        if texts and texts != force:
            count, force = count + 1, texts
        expected.append((count, force))
    assert asyncio.run(recorded()) == expected
