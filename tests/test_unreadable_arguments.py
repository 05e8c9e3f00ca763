"""Tool-call arguments no JSON reader can hold: nested past the decoder's depth, or a number past
Python's digit limit. A model's answer holding one is bad arguments, reported to the model like
any other; the tool never runs and the run goes on, with core only and every plugin installed
(whose hooks read the arguments too)."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core.testing import ScriptedModel

DEEP = "[" * 100_000 + "]" * 100_000
LONG = "1" + "0" * 5_000


@pytest.mark.parametrize(
    ("value", "said"),
    [(DEEP, "nested too deeply to decode"), (LONG, "unreadable: Exceeds the limit")],
)
@pytest.mark.parametrize("hooks", [Hooks(), None], ids=["core only", "every plugin installed"])
def test_the_model_is_told_and_the_tool_never_runs(value: str, said: str, hooks: Hooks | None):
    ran: list[object] = []

    def echo(x: object) -> str:
        """Echo x."""
        ran.append(x)
        return "echoed"

    call = ToolCall("c1", "echo", '{"x": ' + value + "}")
    model = ScriptedModel([Message.assistant("", tool_calls=[call]), Message.assistant("done")])
    result = asyncio.run(Agent("a", model, "hi", [echo], hooks=hooks).run("go"))
    assert result.output == "done"
    assert ran == []
    told = result.transcript[-2]
    assert told.role == "tool" and told.is_error
    assert said in str(told.content)


@settings(max_examples=30, deadline=None)
@given(depth=st.integers(1, 200_000), opener=st.sampled_from(["[", '{"k": ']))
def test_any_depth_decodes_or_is_bad_json(depth: int, opener: str):
    closer = "]" if opener == "[" else "}"
    text = opener * depth + "0" + closer * depth
    try:
        value = ToolCall("c", "t", text).parsed_arguments()
    except json.JSONDecodeError as exc:
        assert exc.msg == "nested too deeply to decode"
    else:
        levels = 0
        while isinstance(value, list | dict):
            value = value[0] if isinstance(value, list) else value["k"]
            levels += 1
        assert (levels, value) == (depth, 0)


@settings(max_examples=30, deadline=None)
@given(digits=st.integers(1, 20_000))
def test_any_number_length_decodes_or_is_bad_json(digits: int):
    text = '{"n": ' + "9" * digits + "}"
    try:
        value = ToolCall("c", "t", text).parsed_arguments()
    except json.JSONDecodeError as exc:
        assert exc.msg.startswith("unreadable: Exceeds the limit")
    else:
        assert value["n"] == int("9" * digits)
