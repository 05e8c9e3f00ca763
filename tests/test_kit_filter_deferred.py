"""Kit(message_filter=) and Kit(deferred_tools=): what a model call leaves out, and tools built
once the kit's session is open."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import APP_ONLY
from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import HookError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import ToolDefinitionError
from agentkit_core import drop_app_only
from agentkit_core import open_sessions
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ToolConflictError
from agentkit_core.testing import ScriptedModel

ROOT = Path(__file__).resolve().parent.parent


def bare() -> PluginManager:
    """A manager of no installed plugin: nothing frames the tools' results."""
    return PluginManager(entry_points=False)


def note(text: str) -> Message:
    return Message("user", text, metadata={APP_ONLY: True})


# ---------------------------------------------------------------------- the filter


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    """Conversations of user turns, app-only notes, and calls with their results."""
    out: list[Message] = [Message.system("rules")]
    for n in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["user", "note", "calls", "answer"]))
        marked = draw(st.booleans())
        meta = {APP_ONLY: True} if marked else {}
        if kind == "user":
            out.append(Message("user", f"ask {n}", metadata=meta))
        elif kind == "note":
            out.append(note(f"note {n}"))
        elif kind == "answer":
            out.append(Message("assistant", f"answer {n}", metadata=meta))
        else:
            calls = tuple(ToolCall(f"c{n}_{i}", "t") for i in range(draw(st.integers(1, 2))))
            out.append(Message("assistant", "", calls))
            out.extend(Message("tool", "r", tool_call_id=c.id, metadata=meta) for c in calls)
    out.append(Message("user", "the question", metadata={APP_ONLY: draw(st.booleans())}))
    return out


@settings(max_examples=200)
@given(transcripts())
def test_drop_app_only_keeps_what_the_model_must_see(messages: list[Message]) -> None:
    from agentkit_core._message_filter import checked_filter

    kept = checked_filter(drop_app_only)(None, messages)  # raises if it dropped too much
    assert kept[-1] is messages[-1]  # the last user message, marked or not
    assert [m for m in messages if m.role == "tool"] == [m for m in kept if m.role == "tool"]
    dropped = [m for m in messages if not any(m is k for k in kept)]
    assert all(m.metadata.get(APP_ONLY) for m in dropped)
    assert not any(m.metadata.get(APP_ONLY) and m.role in ("system",) for m in kept)


@settings(max_examples=200)
@given(transcripts(), st.data())
def test_a_filter_that_drops_a_needed_message_is_refused(
    messages: list[Message], data: st.DataObject
) -> None:
    from agentkit_core._message_filter import checked_filter

    needed = [
        i
        for i, m in enumerate(messages)
        if m.role == "tool" or i == len(messages) - 1 or (m.role == "assistant" and m.tool_calls)
    ]
    gone = data.draw(st.sampled_from(needed))
    bad = checked_filter(lambda ms: [m for i, m in enumerate(ms) if i != gone])
    with pytest.raises(HookError, match="which the model must see") as caught:
        bad(None, messages)
    assert caught.value.hook == "message_filter"


def echo_sent(request: ModelRequest) -> Message:
    return Message.assistant("|".join(m.text for m in request.messages))


async def test_a_kit_s_filter_leaves_notes_out_of_the_request_but_in_the_transcript() -> None:
    kit = Kit(model=ScriptedModel([echo_sent]), message_filter=drop_app_only)
    agent = Agent.from_config(kit.config())
    wc = kit.working_context()
    wc.messages.extend([Message.user("hello"), Message.assistant("hi"), note("user uploaded x")])
    result = await agent.run("and now?", wc=wc)
    assert result.output == "hello|hi|and now?"
    assert any(m.text == "user uploaded x" for m in result.transcript)


@pytest.mark.parametrize(
    ("fn", "said"),
    [
        (lambda ms: ms[:-1], "dropped the last user message 'go'"),
        (lambda ms: ["not a message"], "not a list of Messages"),
    ],
)
async def test_a_bad_filter_fails_the_run_naming_it(fn: Any, said: str) -> None:
    kit = Kit(model=ScriptedModel(["never"]), message_filter=fn)
    with pytest.raises(HookError, match=said):
        await Agent.from_config(kit.config()).run("go")


def test_a_filter_that_is_no_function_is_refused() -> None:
    with pytest.raises(ConfigError, match="message_filter= takes a function") as caught:
        Kit(model="test", message_filter="app-only")  # type: ignore[typeddict-item]
    assert caught.value.value == "app-only"


# ---------------------------------------------------------------------- deferred tools

KIT = textwrap.dedent(
    """
    from agentkit_core import Kit, Message, ToolCall, tool
    from agentkit_core.testing import ScriptedModel


    def deferred(kit):
        session = kit.session_id
        policy = kit.policy

        @tool
        def where_am_i() -> str:
            '''The session this conversation is recorded in.'''
            return f"{session} policy={policy is not None}"

        return [where_am_i]


    def script():
        call = ToolCall("w1", "where_am_i", "{}")
        return ScriptedModel([Message.assistant("", [call]), "noted"])
    """
)


def load_kit_module(tmp_path: Path) -> Any:
    (tmp_path / "deferred_kit.py").write_text(KIT)
    sys.path.insert(0, str(tmp_path))
    try:
        import deferred_kit

        return deferred_kit
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("deferred_kit", None)


async def test_deferred_tools_see_the_open_session_and_survive_a_resume_in_another_process(
    tmp_path: Path,
    pm,
) -> None:
    mod = load_kit_module(tmp_path)
    url = f"sqlite:///{tmp_path}/sessions.sqlite"
    sessions = await open_sessions(
        url, manager=pm
    )  # the installed SQLite store; the kit's manager is bare
    async with (
        sessions,
        await Kit.open(
            model=mod.script(), session=sessions, deferred_tools=mod.deferred, manager=bare()
        ) as kit,
    ):
        assert [t.name for t in kit.tools()] == ["where_am_i"]
        given = Kit(model="test", tools=[where_am_i]).tools()  # where tools= puts them
        assert [t.source for t in kit.tools()] == [t.source for t in given]
        result = await Agent.from_config(kit.config()).run("where?", wc=kit.working_context())
        session = kit.session_id
    assert [m.content for m in result.transcript if m.role == "tool"] == [f"{session} policy=False"]
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from agentkit_core import Agent, Kit, PluginManager, open_sessions
        import deferred_kit

        async def main():
            sessions = await open_sessions({url!r}, manager=PluginManager())
            opened = Kit.open(model=deferred_kit.script(), session=sessions,
                              resume={session!r}, deferred_tools=deferred_kit.deferred,
                              manager=PluginManager(entry_points=False))
            async with await opened as kit:
                result = await Agent.from_config(kit.config()).run(
                    "and now?", wc=kit.working_context())
                print([m.content for m in result.transcript if m.role == "tool"][-1])

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{session} policy=False"


@tool
def where_am_i() -> str:
    """Clashes with the deferred one."""
    return "here"


async def test_deferred_tools_that_fail_are_refused_naming_the_function(tmp_path: Path) -> None:
    def broken(kit: Kit) -> list[Any]:
        raise RuntimeError("no catalogue yet")

    with pytest.raises(ConfigError, match=r"deferred_tools= function .*broken raised RuntimeError"):
        await Kit.open(model="test", deferred_tools=broken)
    with pytest.raises(ToolDefinitionError, match="is not a tool"):
        await Kit.open(model="test", deferred_tools=lambda kit: [42])
    mod = load_kit_module(tmp_path)
    with pytest.raises(ToolConflictError, match="where_am_i"):
        Kit(model="test", tools=[where_am_i], deferred_tools=mod.deferred)
