"""Typed dependencies: ``run(deps=...)`` reaches the tools as ``ctx.deps``, typed for mypy."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import agent_tool
from agentkit_core import tool
from agentkit_core.testing import ScriptedModel

ROOT = Path(__file__).resolve().parent.parent
NO_HOOKS = Hooks()  # core only: no installed plugin frames the results


@dataclass
class Shop:
    name: str
    stock: dict[str, int]


@tool
def in_stock(ctx: RunContext[Shop], item: str) -> str:
    """How many of ``item`` the shop has."""
    return f"{ctx.deps.name}: {ctx.deps.stock.get(item, 0)}"


def clerk(*answers: object) -> Agent[Shop]:
    calls = [ToolCall("c1", "in_stock", '{"item": "pen"}')]
    model = ScriptedModel([Message.assistant("", calls), *answers])
    return Agent("clerk", model, tools=[in_stock], hooks=NO_HOOKS)


def tool_results(result: object) -> list[object]:
    return [m.content for m in result.transcript if m.role == "tool"]  # type: ignore[attr-defined]


@settings(deadline=None)
@given(st.dictionaries(st.text(min_size=1), st.integers()), st.text())
def test_the_tools_see_the_run_s_deps(stock: dict[str, int], name: str) -> None:
    shop = Shop(name, {**stock, "pen": 3})
    result = clerk("ok").run_sync("pens?", deps=shop)
    assert tool_results(result) == [f"{name}: 3"]


async def test_each_run_has_its_own_deps_and_a_stream_takes_them_too() -> None:
    agent = Agent(
        "clerk",
        ScriptedModel(
            [Message.assistant("", [ToolCall("c1", "in_stock", '{"item": "pen"}')]), "a"] * 2
        ),
        tools=[in_stock],
        hooks=NO_HOOKS,
    )
    first = await agent.run("x", deps=Shop("north", {"pen": 1}))
    events = [e async for e in agent.run_stream_events("x", deps=Shop("south", {"pen": 2}))]
    assert tool_results(first) == ["north: 1"]
    assert tool_results(events[-1].result) == ["south: 2"]  # type: ignore[attr-defined]


async def test_a_child_agent_gets_its_parent_s_deps() -> None:
    child = clerk("the child counted")
    parent = Agent(
        "boss",
        ScriptedModel(
            [Message.assistant("", [ToolCall("h1", "clerk", '{"task": "count"}')]), "done"]
        ),
        tools=[agent_tool(child)],
        hooks=NO_HOOKS,
    )
    await parent.run("go", deps=Shop("main", {"pen": 7}))
    child_run = child.model.requests[-1]  # type: ignore[attr-defined]
    assert any("main: 7" in m.text for m in child_run.messages if m.role == "tool")


async def test_deps_given_twice_are_refused_naming_both() -> None:
    agent = clerk("ok")
    ctx = agent.new_context()
    ctx.deps = Shop("a", {})
    with pytest.raises(ConfigError, match=r"already carries deps Shop\(name='a'") as caught:
        await agent.run("x", ctx=ctx, deps=Shop("b", {}))
    assert caught.value.value == Shop("b", {})
    same = ctx.deps
    result = await agent.run("x", ctx=ctx, deps=same)  # the same object: no conflict
    assert tool_results(result) == ["a: 0"]


def test_mypy_refuses_a_tool_of_other_deps(tmp_path: Path) -> None:
    from mypy import api

    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        textwrap.dedent(
            """
            from agentkit_core import RunContext

            class Shop:
                name: str = ""

            def count(ctx: RunContext[Shop]) -> object:
                return ctx.deps.stock  # Shop has no stock
            """
        )
    )
    checked = ROOT / "tests/typing/deps_checked.py"
    out, _, status = api.run(["--strict", "--no-incremental", str(wrong), str(checked)])
    assert status == 1
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1 and '"Shop" has no attribute "stock"' in errors[0], out
    assert errors[0].startswith(str(wrong))  # the typed uses in deps_checked.py pass
