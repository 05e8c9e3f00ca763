"""Secret taint: a secret answer keeps every run it reaches out of the checkpoint store.

Taint flows from a child agent to its parent, from a tainted parent to the children it starts
afterwards, and through a WorkingContext into later runs; it does not depend on a producer
passing ``ctx=`` to ``snapshot()``; and a tainted run is marked so ``resume`` refuses it.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Checkpointer
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import agent_tool
from agentkit_core import open_checkpointer
from agentkit_core import tool
from agentkit_core.plugin import DONE
from agentkit_core.plugin import RUNNING
from agentkit_core.plugin import TAINTED
from agentkit_core.plugin import WorkingContext
from agentkit_core.testing import ScriptedModel

CODE = "493817"  # the one-time code a person types in


async def person(question: str, schema: Any, secret: bool) -> str:
    return CODE


@tool
async def ask_code(ctx: RunContext) -> str:
    """Ask the person for their one-time code."""
    return f"the code is {await ctx.elicit('One-time code?', secret=True)}"


@tool
def lookup(name: str) -> str:
    """Look up an account."""
    return f"account of {name}"


def call(name: str, arguments: str = "{}", call_id: str = "c1") -> Message:
    return Message.assistant("", [ToolCall(call_id, name, arguments)])


def child(*script: Any) -> Agent:
    return Agent(
        "verifier", ScriptedModel(script), tools=[ask_code], elicitor=person, hooks=Hooks()
    )


def stored_text(db: Path) -> str:
    """Every byte of every record in the SQLite store, to search for the secret."""
    # closed, not only committed: Python 3.13 warns (an error here) about an unclosed connection
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT * FROM agentkit_checkpoints").fetchall()
    return "\n".join(str(row) for row in rows)


async def records(cp: Checkpointer, run_id: str) -> list[tuple[str, Any]]:
    out = []
    for version in await cp.list_versions(run_id):
        got = await cp.at_version(run_id, version)
        assert got is not None
        out.append((got.status, got.state))
    return out


@pytest.fixture
async def cp(tmp_path: Path, pm) -> Any:
    checkpointer = await open_checkpointer(f"sqlite:///{tmp_path}/runs.db", manager=pm)
    yield checkpointer
    await checkpointer.aclose()


async def test_a_child_s_secret_taints_its_parent(cp: Checkpointer, tmp_path: Path) -> None:
    verifier = child(call("ask_code"), f"verified with {CODE}")
    parent = Agent(
        "bank",
        ScriptedModel(
            [call("lookup", '{"name": "ann"}'), call("verifier", '{"task": "verify"}'), "ok"]
        ),
        tools=[lookup, agent_tool(verifier)],
        hooks=Hooks(),
        checkpointer=cp,
    )
    result = await parent.run("verify ann", ctx=parent.new_context("bank-run"))
    assert CODE in result.transcript[-2].text  # the child's answer reached the parent
    assert CODE not in stored_text(tmp_path / "runs.db")
    # the untainted first turn stays (its batch marked in flight, the turn, the second batch
    # marked before the child ran), then one marker with no state: resume refuses the run
    assert [s for s, _ in await records(cp, "bank-run")] == [RUNNING, RUNNING, RUNNING, TAINTED]
    assert (await records(cp, "bank-run"))[-1][1] is None
    with pytest.raises(ConfigError, match=r"run 'bank-run'.*secret.*cannot be resumed"):
        await parent.resume("bank-run")


async def test_a_kit_child_agent_taints_the_kit_agent(cp: Checkpointer, tmp_path: Path) -> None:
    verifier = child(call("ask_code"), f"verified with {CODE}")
    model = ScriptedModel([call("verifier", '{"task": "verify"}'), "ok"])
    kit = await Kit.open(model=model, agents=[verifier])
    async with kit:
        agent = Agent.from_config(kit.config(), checkpointer=cp, hooks=Hooks())
        await agent.run("verify", ctx=agent.new_context("kit-run"))
    assert CODE not in stored_text(tmp_path / "runs.db")
    # the batch marked in flight before the child ran (no secret yet), then only the marker
    assert [s for s, _ in await records(cp, "kit-run")] == [RUNNING, TAINTED]


async def test_a_producer_that_passes_no_ctx_is_still_refused(
    cp: Checkpointer, tmp_path: Path
) -> None:
    @tool
    async def remember(ctx: RunContext) -> str:
        """Ask for the code, then checkpoint a workflow of our own: without ctx=."""
        code = await ctx.elicit("One-time code?", secret=True)
        skipped = await cp.snapshot("side-flow", {"code": code}, namespace="workflow")
        return f"version {skipped.version}"

    agent = Agent(
        "a",
        ScriptedModel([call("remember"), "ok"]),
        tools=[remember],
        elicitor=person,
        hooks=Hooks(),
    )
    result = await agent.run("x")
    assert result.transcript[-2].text == "version 0"
    assert CODE not in stored_text(tmp_path / "runs.db")


async def test_a_tainted_parent_taints_the_children_it_starts(
    cp: Checkpointer, tmp_path: Path
) -> None:
    helper = Agent("helper", ScriptedModel(["helped"]), hooks=Hooks(), checkpointer=cp)
    parent = Agent(
        "p",
        ScriptedModel([call("ask_code"), call("helper", f'{{"task": "use {CODE}"}}'), "ok"]),
        tools=[ask_code, agent_tool(helper)],
        elicitor=person,
        hooks=Hooks(),
    )
    await parent.run("x")
    assert CODE not in stored_text(tmp_path / "runs.db")


async def test_taint_flows_into_later_runs_of_one_conversation(
    cp: Checkpointer, tmp_path: Path
) -> None:
    agent = Agent(
        "a",
        ScriptedModel([call("ask_code"), f"noted {CODE}", "sure"]),
        tools=[ask_code],
        elicitor=person,
        hooks=Hooks(),
        checkpointer=cp,
    )
    wc = WorkingContext()
    await agent.run("first", wc=wc)
    assert wc.secret_tainted
    second = await agent.run("what was the code?", wc=wc, ctx=agent.new_context("second"))
    assert second.output == "sure"
    assert CODE not in stored_text(tmp_path / "runs.db")
    assert [s for s, _ in await records(cp, "second")] == [TAINTED]


async def test_an_untainted_run_is_unchanged(cp: Checkpointer) -> None:
    agent = Agent(
        "a",
        ScriptedModel([call("lookup", '{"name": "bo"}'), "done"]),
        tools=[lookup],
        hooks=Hooks(),
        checkpointer=cp,
    )
    await agent.run("x", ctx=agent.new_context("clean"))
    assert [s for s, _ in await records(cp, "clean")] == [RUNNING, RUNNING, DONE]


def test_taint_cannot_be_cleared() -> None:
    ctx = RunContext()
    ctx.secret_tainted = True
    with pytest.raises(ConfigError, match="cannot be cleared"):
        ctx.secret_tainted = False
    assert ctx.secret_tainted


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=6), st.data())
def test_taint_reaches_every_ancestor_and_later_child(parents: list[int], data: Any) -> None:
    """A tree of contexts: tainting one taints its ancestors, and children made after."""
    nodes = [RunContext()]
    for p in parents:
        nodes.append(RunContext(parent=nodes[p % len(nodes)]))
    victim = data.draw(st.sampled_from(nodes))
    victim.secret_tainted = True
    ancestors = set()
    node: RunContext | None = victim
    while node is not None:
        ancestors.add(id(node))
        node = node.parent
    for n in nodes:
        assert n.secret_tainted == (id(n) in ancestors)
    late = RunContext(parent=data.draw(st.sampled_from(nodes)))
    assert late.secret_tainted == late.parent.secret_tainted
