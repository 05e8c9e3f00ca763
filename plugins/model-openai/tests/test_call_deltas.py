"""Tool calls told as they are written: the ``"tool_call_delta"`` events of both wires (Chat
Completions and Responses), from recorded streams served by the local wire server, and a run's
``tool_call_started``, argument deltas and ``tool_call_ready`` through ``run_stream_events``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentkit_model_openai import OpenAIModel
from agentkit_model_openai import OpenAIResponsesModel
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ToolSpec
from agentkit_core.testing import run_tool_calls
from agentkit_core.testing import split_at
from agentkit_core.testing import streamed_tool_calls

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ToolSpec(
    "get_time",
    "The time in a time zone.",
    {"type": "object", "properties": {"zone": {"type": "string"}}},
)


def ask(*tools: ToolSpec) -> ModelRequest:
    return ModelRequest((Message.user("Weather in Paris, time in Rome?"),), tools=tools)


@pytest.fixture
def chat(server: Any) -> OpenAIModel:
    return OpenAIModel("gpt-4o-mini", base_url=server.url, api_key="sk-test")


@pytest.fixture
def responses(server: Any) -> OpenAIResponsesModel:
    return OpenAIResponsesModel("gpt-4.1-mini", base_url=server.url, api_key="sk-test")


# ---------------------------------------------------------------------- Chat Completions


async def test_chat_tells_two_interleaved_calls_fragment_by_fragment(
    server: Any, chat: OpenAIModel
) -> None:
    server.sse("parallel_tools.sse")  # the calls' fragments alternate, told apart by `index`
    weather, time = ("call_Pa1", "get_weather"), ("call_Ro2", "get_time")
    assert await streamed_tool_calls(chat, ask(WEATHER, TIME)) == [
        ("tool_call_delta", *weather, ""),  # as soon as its id and name are known
        ("tool_call_delta", *weather, '{"ci'),
        ("tool_call_delta", *time, ""),
        ("tool_call_delta", *weather, 'ty": "Pa'),
        ("tool_call_delta", *time, '{"zone": '),
        ("tool_call_delta", *weather, 'ris"}'),
        ("tool_call_delta", *time, '"Europe/Rome"}'),
        ("tool_call", *weather, '{"city": "Paris"}'),
        ("tool_call", *time, '{"zone": "Europe/Rome"}'),
    ]


async def test_chat_call_without_arguments_is_told_its_empty_object(
    server: Any, chat: OpenAIModel
) -> None:
    server.sse("no_arguments.sse")
    assert await streamed_tool_calls(chat, ask(TIME)) == [
        ("tool_call_delta", "call_Nw1", "get_time", ""),
        ("tool_call_delta", "call_Nw1", "get_time", "{}"),  # what the final call holds
        ("tool_call", "call_Nw1", "get_time", "{}"),
    ]


async def test_chat_whole_calls_without_an_index_are_each_told_whole(
    server: Any, chat: OpenAIModel
) -> None:
    server.sse("whole_tool_calls.sse")
    paris, rome = '{"city": "Paris"}', '{"city": "Rome"}'
    assert await streamed_tool_calls(chat, ask(WEATHER)) == [
        ("tool_call_delta", "call_a", "get_weather", paris),
        ("tool_call_delta", "call_b", "get_weather", rome),
        ("tool_call", "call_a", "get_weather", paris),
        ("tool_call", "call_b", "get_weather", rome),
    ]


def chat_chunk(call: dict[str, Any]) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}], "model": "gpt-4o-mini"}
    return f"data: {json.dumps(chunk)}\n\n".encode()


ARGUMENTS = st.dictionaries(st.text(max_size=6), st.text() | st.integers(), max_size=4).map(
    json.dumps
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(arguments=ARGUMENTS, cuts=st.lists(st.integers(0, 400), max_size=12))
async def test_chat_any_split_of_the_arguments_gives_deltas_that_join_to_them(
    server: Any, chat: OpenAIModel, arguments: str, cuts: list[int]
) -> None:
    first, *rest = split_at(arguments, cuts)
    head = {"index": 0, "id": "call_1", "function": {"name": "get_weather", "arguments": first}}
    chunks = [
        chat_chunk(head),
        *(chat_chunk({"index": 0, "function": {"arguments": f}}) for f in rest),
    ]
    server.events(*chunks, b"data: [DONE]\n\n")
    events = await streamed_tool_calls(chat, ask(WEATHER))
    assert events[-1] == ("tool_call", "call_1", "get_weather", arguments)
    deltas = events[:-1]
    assert {(kind, i, name) for kind, i, name, _ in deltas} == {
        ("tool_call_delta", "call_1", "get_weather")
    }
    assert "".join(fragment for *_, fragment in deltas) == arguments


# ---------------------------------------------------------------------- Responses


async def test_responses_tells_each_call_as_its_item_is_added_and_its_arguments_stream(
    server: Any, responses: OpenAIResponsesModel
) -> None:
    server.sse("responses_parallel_tools.sse")
    weather, time = ("call_Pa1weather", "get_weather"), ("call_Ro2time", "get_time")
    assert await streamed_tool_calls(responses, ask(WEATHER, TIME)) == [
        ("tool_call_delta", *weather, ""),
        ("tool_call_delta", *weather, '{"city'),
        ("tool_call_delta", *weather, '": "Pa'),
        ("tool_call_delta", *weather, 'ris"}'),
        ("tool_call", *weather, '{"city": "Paris"}'),
        ("tool_call_delta", *time, ""),
        ("tool_call_delta", *time, '{"zone":'),
        ("tool_call_delta", *time, ' "Europe'),
        ("tool_call_delta", *time, '/Rome"}'),
        ("tool_call", *time, '{"zone": "Europe/Rome"}'),
    ]


async def test_responses_call_without_arguments_is_told_its_empty_object(
    server: Any, responses: OpenAIResponsesModel
) -> None:
    server.sse("responses_no_arguments.sse")
    assert await streamed_tool_calls(responses, ask(TIME)) == [
        ("tool_call_delta", "call_Nw1now", "get_time", ""),
        ("tool_call_delta", "call_Nw1now", "get_time", "{}"),
        ("tool_call", "call_Nw1now", "get_time", "{}"),
    ]


def responses_stream(call_id: str, fragments: list[str]) -> list[bytes]:
    item = {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": ""}
    whole = dict(item, arguments="".join(fragments))
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        *(
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": f}
            for f in fragments
        ),
        {"type": "response.output_item.done", "output_index": 0, "item": whole},
        {"type": "response.completed", "response": {"status": "completed", "output": [whole]}},
    ]
    return [f"data: {json.dumps(event)}\n\n".encode() for event in events]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(arguments=ARGUMENTS, cuts=st.lists(st.integers(0, 400), max_size=12))
async def test_responses_any_split_of_the_arguments_gives_deltas_that_join_to_them(
    server: Any, responses: OpenAIResponsesModel, arguments: str, cuts: list[int]
) -> None:
    server.events(*responses_stream("call_1", split_at(arguments, cuts)))
    events = await streamed_tool_calls(responses, ask(WEATHER))
    assert events[-1] == ("tool_call", "call_1", "get_weather", arguments)
    assert "".join(fragment for *_, fragment in events[:-1]) == arguments


# ---------------------------------------------------------------------- a run's events


async def test_a_chat_run_streams_each_call_started_its_arguments_and_ready(
    server: Any, chat: OpenAIModel
) -> None:
    server.sse("parallel_tools.sse")
    server.sse("plain.sse")
    calls = await run_tool_calls(chat)
    assert list(calls) == ["call_Pa1", "call_Ro2"]
    # interleaved: the second call started while the first was still being written
    assert calls["call_Ro2"][0].seq < calls["call_Pa1"][-1].seq


async def test_a_responses_run_streams_each_call_started_its_arguments_and_ready(
    server: Any, responses: OpenAIResponsesModel
) -> None:
    server.sse("responses_parallel_tools.sse")
    server.sse("responses_plain.sse")
    calls = await run_tool_calls(responses)
    assert list(calls) == ["call_Pa1weather", "call_Ro2time"]
