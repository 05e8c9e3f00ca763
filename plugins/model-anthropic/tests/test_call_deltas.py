"""Tool calls told as they are written: ``"tool_call_delta"`` events from recorded Messages API
streams served by the local wire server, the arguments respelled as the final call spells them,
and a run's ``tool_call_started``, argument deltas and ``tool_call_ready`` through
``run_stream_events``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentkit_model_anthropic import AnthropicModel
from agentkit_model_anthropic._respell import Respeller
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ToolSpec
from agentkit_core.testing import json_values
from agentkit_core.testing import run_tool_calls
from agentkit_core.testing import split_at
from agentkit_core.testing import streamed_tool_calls

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ToolSpec("get_time", "The time in a time zone.", {"type": "object", "properties": {}})


def ask(*tools: ToolSpec) -> ModelRequest:
    return ModelRequest((Message.user("Weather in Paris, time in Rome?"),), tools=tools)


@pytest.fixture
def model(server: Any) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key="sk-ant-test")


async def test_each_call_is_told_when_its_block_starts_then_fragment_by_fragment(
    server: Any, model: AnthropicModel
) -> None:
    server.sse("parallel_tools.sse")
    weather, time = ("toolu_01Weather", "get_weather"), ("toolu_02Time", "get_time")
    assert await streamed_tool_calls(model, ask(WEATHER, TIME)) == [
        ("tool_call_delta", *weather, ""),  # as soon as its id and name are known
        ("tool_call_delta", *weather, '{"city'),
        ("tool_call_delta", *weather, '": "Par'),
        ("tool_call_delta", *weather, 'is"}'),
        ("tool_call_delta", *time, ""),
        ("tool_call_delta", *time, '{"zone": '),
        ("tool_call_delta", *time, '"Europe/Rome"}'),
        ("tool_call", *weather, '{"city": "Paris"}'),
        ("tool_call", *time, '{"zone": "Europe/Rome"}'),
    ]


async def test_a_call_without_arguments_is_told_its_empty_object(
    server: Any, model: AnthropicModel
) -> None:
    server.sse("no_arguments.sse")  # one empty partial_json, as the API sends for no input
    assert await streamed_tool_calls(model, ask(TIME)) == [
        ("tool_call_delta", "toolu_03Now", "get_time", ""),
        ("tool_call_delta", "toolu_03Now", "get_time", "{}"),  # what the final call holds
        ("tool_call", "toolu_03Now", "get_time", "{}"),
    ]


async def test_arguments_are_told_as_the_final_call_spells_them(
    server: Any, model: AnthropicModel
) -> None:
    # written without spaces, with \u escapes (a surrogate pair cut between two events), 3.50
    # and -0: the final call's arguments are json.dumps of the input, and the deltas join to them
    server.sse("respelled_arguments.sse")
    events = await streamed_tool_calls(model, ask(WEATHER))
    arguments = '{"city": "Paris", "days": 3.5, "note": "café 😀", "ok": true, "n": [1, 2, 0]}'
    assert events == [
        ("tool_call_delta", "toolu_04Weather", "get_weather", ""),
        ("tool_call_delta", "toolu_04Weather", "get_weather", '{"city": "Par'),
        ("tool_call_delta", "toolu_04Weather", "get_weather", 'is", "days": 3.5, "note": "café '),
        ("tool_call_delta", "toolu_04Weather", "get_weather", '😀", "ok": true, "n": [1, 2, 0]}'),
        ("tool_call", "toolu_04Weather", "get_weather", arguments),
    ]


# ---------------------------------------------------------------------- any spelling, any split

JSON = json_values(text=st.text(max_size=6), keys=st.text(max_size=4))
OBJECTS = st.dictionaries(st.text(max_size=6), JSON, max_size=4)


@st.composite
def spelled(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """An object and one of the many ways JSON may spell it."""
    value = draw(OBJECTS)
    text = json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 0, 2, "\t"])),
        separators=draw(st.sampled_from([None, (",", ":"), (" , ", " : ")])),
    )
    return value, text


@settings(max_examples=300, deadline=None)
@given(spelled(), st.lists(st.integers(0, 1000), max_size=20))
def test_any_spelling_cut_anywhere_is_respelled_as_json_dumps(
    case: tuple[dict[str, Any], str], cuts: list[int]
) -> None:
    value, text = case
    respeller = Respeller()
    respelled = "".join(respeller.feed(fragment) for fragment in split_at(text, cuts))
    assert respelled == json.dumps(value, ensure_ascii=False)


def sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


def tool_stream(fragments: list[str]) -> list[bytes]:
    block = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": [],
    }
    return [
        sse("message_start", {"type": "message_start", "message": message}),
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        *(
            sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": f},
                },
            )
            for f in fragments
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 9},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(spelled(), st.lists(st.integers(0, 1000), max_size=12))
async def test_any_split_into_sse_events_gives_deltas_that_join_to_the_arguments(
    server: Any, model: AnthropicModel, case: tuple[dict[str, Any], str], cuts: list[int]
) -> None:
    value, text = case
    server.events(*tool_stream(split_at(text, cuts)))
    events = await streamed_tool_calls(model, ask(WEATHER))
    arguments = json.dumps(value, ensure_ascii=False)
    assert events[-1] == ("tool_call", "toolu_1", "get_weather", arguments)
    assert {e[:3] for e in events[:-1]} == {("tool_call_delta", "toolu_1", "get_weather")}
    assert "".join(fragment for *_, fragment in events[:-1]) == arguments


# ---------------------------------------------------------------------- a run's events


async def test_a_run_streams_each_call_started_its_arguments_and_ready(
    server: Any, model: AnthropicModel
) -> None:
    server.sse("parallel_tools.sse")
    server.sse("plain.sse")
    calls = await run_tool_calls(model)
    assert list(calls) == ["toolu_01Weather", "toolu_02Time"]
