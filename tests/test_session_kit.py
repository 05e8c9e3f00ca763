"""A kit's session: resume at the leaf, approvals after a restart, forks, many conversations on
one kit, and secrets that never reach the record."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import Recorder
from agentkit_core import RunContext
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import open_sessions
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import SessionItem
from agentkit_core.plugin import open_session_store
from agentkit_core.testing import ScriptedModel


@pytest.fixture
async def sessions(pm) -> Any:
    async with Sessions(await open_session_store("memory://", manager=pm)) as opened:
        yield opened


def seen(request: ModelRequest) -> Message:
    """An answer naming every message the model was sent, ``role:text`` joined by ``|``."""
    return Message.assistant("|".join(f"{m.role}:{m.text}" for m in request.messages))


@tool
def transfer(amount: int) -> str:
    """Move money."""
    return f"moved {amount}"


def ask_transfers(ctx: Any, call: ToolCall) -> ToolDecision | None:
    return ToolDecision.ask("a person approves") if call.name == "transfer" else None


async def bank(sessions: Sessions, steps: list[Any], **session: Any) -> Kit:
    return await Kit.open(
        model=ScriptedModel(steps),
        instructions="Bank rules.",
        tools=[transfer],
        before_tool_call=ask_transfers,
        session=sessions,
        **session,
    )


async def test_a_new_kit_continues_a_finished_conversation_at_its_leaf(
    sessions: Sessions,
) -> None:
    first = await bank(sessions, ["hi ann"])
    await Agent.from_config(first.config()).run("I am ann")
    again = await bank(sessions, [seen], resume=first.session_id)
    assert again.session_id == first.session_id
    assert [m.text for m in again.working_context().messages] == ["I am ann", "hi ann"]
    result = await Agent.from_config(again.config()).run("who am I?", wc=again.working_context())
    assert result.output == ("system:Bank rules.|user:I am ann|assistant:hi ann|user:who am I?")
    path = await sessions.path(first.session_id)
    assert [i.kind for i in path] == [
        "header",
        "user",
        "instructions",
        "response",
        "user",
        "response",
    ]


async def test_a_call_held_before_a_restart_is_approved_or_refused_after_it(
    sessions: Sessions,
) -> None:
    held = Message.assistant("", [ToolCall("c1", "transfer", '{"amount": 5}')])
    first = await bank(sessions, [held])
    suspended = await Agent.from_config(first.config()).run("pay 5")
    assert suspended.status == "suspended"
    for approve, expected in ((True, "moved 5"), (False, "refused by a person")):
        fork = await bank(sessions, [seen], fork=first.session_id)
        state = fork.recorder.state
        assert (state.run, state.held) == (suspended.run_id, suspended.pending)
        result = await Agent.from_config(fork.config()).resume(state.run, {"c1": approve})
        assert expected in result.output
        assert result.output.startswith("system:Bank rules.|user:pay 5|assistant:|tool:")
        path = await sessions.path(fork.session_id)
        [verdict] = [i.body for i in path if i.kind == "verdict" and i.body["hook"] == "approval"]
        assert verdict["decision"] == ("allow" if approve else "deny")
        assert fork.recorder.state.run is None  # the run finished
    # the original session still ends at the held call
    assert (await Recorder.resume(sessions, first.session_id)).state.held == suspended.pending


async def test_resuming_a_run_that_is_not_in_progress_is_refused(sessions: Sessions) -> None:
    kit = await bank(sessions, ["done"])
    result = await Agent.from_config(kit.config()).run("q")
    agent = Agent.from_config(kit.config())
    with pytest.raises(ConfigError, match=rf"cannot resume run '{result.run_id}' from session"):
        await agent.resume(result.run_id)


async def test_a_fork_continues_from_any_item_and_leaves_the_original(sessions: Sessions) -> None:
    kit = await bank(sessions, ["one", "two"])
    agent = Agent.from_config(kit.config())
    await agent.run("first", wc=kit.working_context())
    await agent.run("second", wc=kit.working_context())
    original = await sessions.path(kit.session_id)
    [answer_one] = [i for i in original if i.kind == "response" and i.body["message"].text == "one"]
    fork = await bank(sessions, [seen], fork=kit.session_id, fork_at=answer_one.id)
    assert fork.session_id != kit.session_id
    assert [m.text for m in fork.working_context().messages] == ["first", "one"]
    result = await Agent.from_config(fork.config()).run("instead", wc=fork.working_context())
    assert result.output == "system:Bank rules.|user:first|assistant:one|user:instead"
    assert [i.id for i in await sessions.path(kit.session_id)] == [i.id for i in original]
    info = await sessions.info(fork.session_id)
    assert (info.base_session, info.base_item) == (kit.session_id, answer_one.id)
    # the API does the same without a kit
    by_hand = await Recorder.fork(sessions, kit.session_id, at=answer_one.id, new_id="mine")
    assert by_hand.session_id == "mine"
    assert by_hand.working_context().messages == fork.working_context().messages[:2]


async def test_one_kit_serves_many_conversations_each_its_own_session(
    sessions: Sessions,
) -> None:
    def echo_last(request: ModelRequest) -> Message:
        users = [m.text for m in request.messages if m.role == "user"]
        return Message.assistant(" / ".join(users))

    kit = await Kit.open(model=ScriptedModel([echo_last] * 10), session=sessions)
    agent = Agent.from_config(kit.config())

    async def say(conversation: str, text: str) -> str:
        recorder = await kit.recorder_for(conversation)
        ctx = agent.new_context()
        ctx.recorder = recorder
        result = await agent.run(text, ctx=ctx, wc=recorder.working_context())
        return str(result.output)

    assert await asyncio.gather(say("ann", "hi from ann"), say("bob", "hi from bob")) == [
        "hi from ann",
        "hi from bob",
    ]
    assert await asyncio.gather(say("bob", "bob again"), say("ann", "ann again")) == [
        "hi from bob / bob again",
        "hi from ann / ann again",
    ]
    for conversation in ("ann", "bob"):
        path = await sessions.path(conversation)
        texts = [i.body["message"].text for i in path if i.kind == "user"]
        assert all(conversation in t for t in texts) and len(texts) == 2
        assert path[0].body["kit_fingerprint"] == kit.fingerprint()
    assert [i.kind for i in await sessions.path(kit.session_id)] == ["header"]


@tool
async def sign_in(ctx: RunContext) -> str:
    """Ask for the password and use it."""
    password = await ctx.elicit("Password?", secret=True)
    return f"signed in with {password}"


async def secret(question: str, schema: Any, secret: bool) -> str:
    return "hunter2"


def stored_text(path: list[SessionItem]) -> str:
    return "\n".join(i.body_json for i in path)


async def test_a_secret_answer_and_what_follows_it_are_never_written(tmp_path: Path, pm) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    echo = Message.assistant("your password is hunter2")
    steps = [Message.assistant("", [ToolCall("c1", "sign_in", "{}")]), echo, "fine"]
    kit = await Kit.open(
        model=ScriptedModel(steps), instructions="Sign people in.", tools=[sign_in], session=url
    )
    agent = Agent.from_config(kit.config(), elicitor=secret)
    first = await agent.run("sign me in", wc=kit.working_context())
    assert "hunter2" in first.output  # the run itself had the secret
    await agent.run("thanks", wc=kit.working_context())
    path = await kit.recorder.sessions.path(kit.session_id)
    await kit.aclose()
    assert "hunter2" not in stored_text(path)
    for name in ("s.db", "s.db-wal"):
        file = tmp_path / name
        assert not file.exists() or b"hunter2" not in file.read_bytes()
    kinds = [(i.kind, "redacted" in i.body) for i in path]
    assert kinds == [
        ("header", False),
        ("user", False),
        ("instructions", False),
        ("response", False),
        ("elicitation", False),
        ("tool_result", True),  # after the answer: everything the run derives is withheld
        ("response", True),
        ("user", False),  # the person's next message is theirs
        ("response", True),  # the model's context holds the secret still
    ]
    asked = path[4].body
    assert (asked["question"], asked["secret"], asked["answer"]) == ("Password?", True, None)
    assert asked["by"].endswith(".secret")
    assert path[5].body == {"redacted": "secret_taint", "run": first.run_id}
    # the conversation cannot be rebuilt past the withheld item, and says how to go on
    async with await open_sessions(url, manager=pm) as sessions:
        resumed = await Recorder.resume(sessions, kit.session_id)
        with pytest.raises(ConfigError, match=rf"item '{path[5].id}' was withheld") as caught:
            resumed.working_context()
        assert "fork the session at an item before it" in str(caught.value)
        fork = await Recorder.fork(sessions, kit.session_id, at=path[2].id)
        assert [m.text for m in fork.working_context().messages] == []
        assert fork.state.run is not None  # the task of the run the secret reached, unfinished


async def test_a_secret_in_a_child_agents_run_reaches_the_parents_record(
    sessions: Sessions,
) -> None:
    child = Agent(
        "helper",
        ScriptedModel([Message.assistant("", [ToolCall("k1", "sign_in", "{}")]), "hunter2 ok"]),
        "Help.",
        [sign_in],
        elicitor=secret,
    )
    parent = ScriptedModel(
        [Message.assistant("", [ToolCall("c1", "helper", '{"task": "x"}')]), "ok"]
    )
    kit = await Kit.open(model=parent, agents=[child], session=sessions)
    await Agent.from_config(kit.config()).run("go")
    assert kit.recorder.tainted
    path = await sessions.path(kit.session_id)
    assert "hunter2" not in stored_text(path)
    [link] = [i.body for i in path if i.kind == "child"]
    child_path = await sessions.path(link["session"])
    assert "hunter2" not in stored_text(child_path)
    assert [i.kind for i in path if "redacted" in i.body] == ["tool_result", "response"]
