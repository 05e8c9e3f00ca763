"""The scratchpad rides in every checkpoint the loop writes and comes back on resume: a run's
grounding record (``record_grounding=True``) survives a suspension, a crash and a restart."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Checkpointer
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Prompt
from agentkit_core import RunContext
from agentkit_core import ToolDecision
from agentkit_core import tool
from agentkit_core.plugin import MemoryItem
from agentkit_core.plugin import RequestBuilder
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

#: A fresh manager for what runs outside a test's fixtures (a Hypothesis test, a
#: parametrize), never the process-wide one.
PM = PluginManager()

EVIDENCE = [MemoryItem("The release is on Friday.", "handbook.md", 0.9, {"line": 12})]


async def handbook(ctx: RunContext, task: str) -> list[MemoryItem]:
    return list(EVIDENCE)


@tool
def publish(ctx: RunContext) -> str:
    """Publish the release notes."""
    ctx.scratchpad["published"] = {"at": "friday", "count": 1}
    return "published"


def asks(ctx: Any, call: Any) -> ToolDecision:
    return ToolDecision("ask", "a person approves publishing", "policy")


def grounded_agent(model: ScriptedModel, store: Any, hooks: Hooks | None = None) -> Agent:
    builder = RequestBuilder(
        Prompt("writer", "1", "Write release notes."), grounding=handbook, record_grounding=True
    )
    return Agent(
        "writer",
        model,
        tools=[publish],
        request_builder=builder,
        checkpointer=store,
        hooks=hooks or Hooks(),
    )


async def test_the_grounding_record_survives_a_suspension_and_a_restart(tmp_path: Path, pm) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    first_model = ScriptedModel([Message.assistant("", [tool_call("publish", id="p1")])])
    store = await open_checkpoint_store(url, manager=pm)
    agent = grounded_agent(first_model, store, Hooks.of("policy", before_tool_call=asks))
    suspended = await agent.run("Publish the notes.")
    assert suspended.status == "suspended"
    record = [{"task": "Publish the notes.", "items": [dataclasses.asdict(EVIDENCE[0])]}]
    saved = await Checkpointer(store).resume(suspended.run_id)
    assert saved is not None and saved.state["scratchpad"] == {"grounding": record}
    await store.aclose()

    # a new process: a fresh store object, agent and context; only the checkpoint is left
    store = await open_checkpoint_store(url, manager=pm)
    later = grounded_agent(ScriptedModel(["Published on Friday."]), store)
    ctx = later.new_context(suspended.run_id)
    ctx.scratchpad["caller"] = "kept"
    result = await later.resume(suspended.run_id, ["p1"], ctx=ctx)
    assert result.output == "Published on Friday."
    assert ctx.scratchpad == {
        "grounding": record,
        "published": {"at": "friday", "count": 1},
        "caller": "kept",
    }
    done = await Checkpointer(store).resume(suspended.run_id, include_terminal=True)
    assert done is not None and done.status == "done"
    assert done.state["scratchpad"]["grounding"] == record
    await store.aclose()


async def test_a_crashed_run_resumes_with_what_its_tools_wrote(pm) -> None:
    started = asyncio.Event()

    @tool
    async def wait_forever(ctx: RunContext) -> str:
        """Hang."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    store = await open_checkpoint_store("memory://", manager=pm)
    model = ScriptedModel(
        [
            Message.assistant("", [tool_call("publish", id="p1")]),
            Message.assistant("", [tool_call("wait_forever", id="w1")]),
        ]
    )
    builder = RequestBuilder(Prompt("w", "1", ""), grounding=handbook, record_grounding=True)
    agent = Agent(
        "writer",
        model,
        tools=[publish, wait_forever],
        request_builder=builder,
        checkpointer=store,
        hooks=Hooks(),
    )
    ctx = agent.new_context()
    run = asyncio.create_task(agent.run("go", ctx=ctx))
    await started.wait()
    run.cancel()  # like a crash: the last checkpoint is the RUNNING one after turn 1
    with pytest.raises(asyncio.CancelledError):
        await run
    again = Agent("writer", ScriptedModel(["done"]), tools=[publish], checkpointer=store)
    fresh = again.new_context(ctx.run_id)
    assert fresh.scratchpad == {}
    result = await again.resume(ctx.run_id, ctx=fresh)
    assert result.output == "done"
    assert fresh.scratchpad["published"] == {"at": "friday", "count": 1}
    assert fresh.scratchpad["grounding"][0]["items"][0]["source"] == "handbook.md"


async def test_a_checkpoint_written_before_scratchpads_resumes_with_an_empty_one(pm) -> None:
    store = await open_checkpoint_store("memory://", manager=pm)
    checkpointer = Checkpointer(store)
    state = {"task": "go", "transcript": [Message.user("go")], "turn": 0, "pending": []}
    await checkpointer.snapshot("old-run", state, "running")
    agent = Agent("a", ScriptedModel(["ok"]), checkpointer=checkpointer, hooks=Hooks())
    ctx = agent.new_context("old-run")
    assert (await agent.resume("old-run", ctx=ctx)).output == "ok"
    assert ctx.scratchpad == {}


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pad=st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=4))
def test_any_json_scratchpad_round_trips_through_sqlite(
    tmp_path: Path, pad: dict[str, Any]
) -> None:
    async def scenario() -> None:
        url = f"sqlite:///{tmp_path / 'pad.db'}"
        store = await open_checkpoint_store(url, manager=PM)
        hooks = Hooks.of("policy", before_tool_call=asks)
        model = ScriptedModel([Message.assistant("", [tool_call("publish", id="p1")])])
        agent = Agent("a", model, tools=[publish], checkpointer=store, hooks=hooks)
        ctx = agent.new_context()
        ctx.scratchpad.update(pad)
        suspended = await agent.run("go", ctx=ctx)
        await store.aclose()
        store = await open_checkpoint_store(url, manager=PM)
        later = Agent("a", ScriptedModel(["ok"]), tools=[publish], checkpointer=store)
        fresh = later.new_context(suspended.run_id)
        await later.resume(suspended.run_id, ["p1"], ctx=fresh)
        assert fresh.scratchpad == {**pad, "published": {"at": "friday", "count": 1}}
        await store.aclose()

    asyncio.run(scenario())
