"""Checked by mypy (pyproject's ``files``), never run: what ``RunContext[Deps]`` promises a tool.

``tests/test_deps.py`` also runs mypy on a wrong use and checks that it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_type

from agentkit_core import Agent
from agentkit_core import RunContext
from agentkit_core import tool


@dataclass
class Shop:
    name: str
    stock: dict[str, int]


@tool
def in_stock(ctx: RunContext[Shop], item: str) -> int:
    """How many of ``item`` the shop has."""
    assert_type(ctx.deps, Shop)
    return ctx.deps.stock.get(item, 0)


async def main() -> None:
    agent: Agent[Shop] = Agent("clerk", "test", tools=[in_stock])
    ctx = agent.new_context()
    assert_type(ctx, RunContext[Shop])
    assert_type(ctx.deps, Shop)
    await agent.run("how many pens?", deps=Shop("corner", {"pen": 3}))


def untyped(ctx: RunContext) -> object:
    """A bare RunContext still works: its deps are Any."""
    return ctx.deps
