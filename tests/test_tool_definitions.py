"""A function pydantic cannot describe is a ToolDefinitionError naming it, when the tool is made.

Before: a ``Callable`` parameter raised pydantic's ``PydanticInvalidForJsonSchema``, a default of
NaN went into the schema (and so into every request body, which no provider parses), a forward
reference pydantic could not resolve was a bare ``NameError``, ``tool(5)`` an AttributeError on
``__qualname__``, and a callable object could not be a tool at all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolDefinitionError
from agentkit_core import tool
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call


def takes_a_function(fn: Callable[[int], int]) -> str:
    return "x"


def nan_default(x: float = math.nan) -> str:
    return "x"


def self_reference(x: list[self_reference]) -> str:  # type: ignore[valid-type]
    return "x"


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (takes_a_function, r"cannot make the JSON schema of tool function takes_a_function"),
        (nan_default, r"cannot make the JSON schema of tool function nan_default: Out of range"),
        (self_reference, r"tool function self_reference"),
        (5, r"5 is not a tool: pass a Tool or a typed function"),
        ("search", r"'search' is not a tool"),
    ],
)
def test_what_cannot_be_described_is_refused_naming_it(fn: object, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        tool(fn)  # type: ignore[arg-type]


class Counter:
    """Counts words."""

    def __call__(self, text: str) -> str:
        return str(len(text.split()))


async def test_a_callable_object_is_a_tool_named_after_its_class() -> None:
    counter = tool(Counter())
    assert counter.name == "Counter" and counter.description == "Counts words."
    assert counter.spec.parameters["required"] == ["text"]
    call = Message.assistant("", tool_calls=[tool_call("Counter", '{"text": "a b c"}')])
    model = ScriptedModel([call, "done"])
    agent = Agent("a", model, tools=[counter], manager=PluginManager(entry_points=False))
    await agent.run("count")
    assert model.requests[1].messages[-1].text == "3"


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_tool_schema_is_always_plain_json(default: float) -> None:
    def fn(x: float = default) -> str:
        return "x"

    try:
        made = tool(fn)
    except ToolDefinitionError:
        assert not math.isfinite(default)
        return
    assert math.isfinite(default)
    json.dumps(made.spec.parameters, allow_nan=False)
