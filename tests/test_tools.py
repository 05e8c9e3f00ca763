"""Function tools: a return value as the model reads it, and arguments as the function gets them."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic_core import to_jsonable_python

from agentkit_core import RunContext
from agentkit_core import ToolResult
from agentkit_core import tool
from agentkit_core._tools import as_tool_result

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


class Colour(enum.IntEnum):
    RED = 1


@dataclasses.dataclass
class Point:
    x: int
    label: str


@given(JSON)
def test_a_return_value_reads_as_its_json(value: Any) -> None:
    """Property: every value is the JSON of its jsonable form, not escaped to ASCII."""
    result = as_tool_result(value)
    if isinstance(value, str):
        assert result == ToolResult(value)
        return
    data = to_jsonable_python(value)
    assert result.content == json.dumps(data, ensure_ascii=False)
    assert json.dumps(result.structured) == json.dumps(data)
    assert not result.is_error


def test_values_that_are_not_plain_json_go_through_their_jsonable_form() -> None:
    assert as_tool_result(Colour.RED) == ToolResult("1", structured=1)
    assert as_tool_result(Point(2, "é")).content == '{"x": 2, "label": "é"}'
    assert as_tool_result(True) == ToolResult("true", structured=True)
    same = ToolResult("kept")
    assert as_tool_result(same) is same


def test_arguments_arrive_validated_with_defaults_and_the_context() -> None:
    seen: list[dict[str, Any]] = []

    def book(room: int, ctx: RunContext, nights: int = 1, note: str | None = None) -> str:
        """Book a room."""
        seen.append({"room": room, "nights": nights, "note": note, "ctx": ctx})
        return "booked"

    booking = tool(book)
    ctx = RunContext()
    result = asyncio.run(booking.invoke({"room": "12"}, ctx))
    assert result == ToolResult("booked")
    assert seen == [{"room": 12, "nights": 1, "note": None, "ctx": ctx}]
    refused = asyncio.run(booking.invoke({"room": "twelve", "extra": 1}, ctx))
    assert refused.is_error
    assert refused.content.startswith("invalid arguments for tool 'book': room: ")
    assert "extra: Extra inputs are not permitted" in refused.content
