"""ToolUnion at run time: sources joined (clash-checked) and removed between listings."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Tool
from agentkit_core import ToolDefinitionError
from agentkit_core import ToolResult
from agentkit_core import ToolUnion
from agentkit_core.plugin import ToolConflictError


class Named(Tool):
    def __init__(self, name: str) -> None:
        super().__init__(name, f"the {name} tool")

    async def invoke(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        return ToolResult(self.name)


class Listing:
    """A dynamic source whose listing can change and can be made to wait."""

    def __init__(self, label: str, names: list[str]) -> None:
        self.label = label
        self.names = names
        self.gate: asyncio.Event | None = None
        self.asked = asyncio.Event()

    async def list_tools(self) -> list[Tool]:
        self.asked.set()
        if self.gate is not None:
            await self.gate.wait()
        return [Named(n) for n in self.names]


names = st.lists(st.sampled_from("abcdefg"), max_size=3, unique=True)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("join"), st.integers(0, 5), names),
        st.tuples(st.just("remove"), st.integers(0, 5), st.just([])),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(names, operations)
def test_joins_and_removes_keep_one_clash_free_namespace(
    first: list[str], ops: list[tuple[str, int, list[str]]]
) -> None:
    """The union offers exactly the sources joined and not removed, in join order; a join
    whose tools clash with what is offered raises and changes nothing."""

    async def scenario() -> None:
        union = await ToolUnion.create([("tools", [Named(n) for n in first])])
        model: dict[str, list[str]] = {"tools": list(first)}
        for op, n, tools in ops:
            label = f"src{n}"
            if op == "join":
                taken = {name for listed in model.values() for name in listed}
                if label in model:
                    with pytest.raises(ToolDefinitionError, match="already has a source"):
                        await union.join(label, Listing(label, tools))
                elif taken & set(tools):
                    with pytest.raises(ToolConflictError):
                        await union.join(label, Listing(label, tools))
                else:
                    await union.join(label, Listing(label, tools))
                    model[label] = list(tools)
            else:
                union.remove(label)
                model.pop(label, None)
            listed = [t.name for t in await union.tools()]
            assert listed == [name for names in model.values() for name in names]
            assert [(o.name, o.source) for o in union.origins()] == [
                (name, lbl) for lbl, names in model.items() for name in names
            ]

    asyncio.run(scenario())


async def test_a_listing_under_way_keeps_its_sources() -> None:
    """A source joined or removed while a listing waits on a server changes the next listing."""
    slow = Listing("slow", ["a"])
    slow.gate = asyncio.Event()
    union = ToolUnion([("slow", slow), ("fixed", [Named("b")])])
    listing = asyncio.create_task(union.tools())
    await slow.asked.wait()
    union.remove("fixed")
    union.add("late", [Named("c")])
    slow.gate.set()
    assert [t.name for t in await listing] == ["a", "b"]
    assert [t.name for t in await union.tools()] == ["a", "c"]


async def test_two_joins_at_once_are_checked_against_each_other() -> None:
    union = await ToolUnion.create([("tools", [Named("a")])])
    one, two = Listing("one", ["x"]), Listing("two", ["x"])
    results = await asyncio.gather(
        union.join("one", one), union.join("two", two), return_exceptions=True
    )
    assert results[0] is None
    assert isinstance(results[1], ToolConflictError)
    assert "'x' is offered by one and by two" in str(results[1])
    assert [t.name for t in await union.tools()] == ["a", "x"]
