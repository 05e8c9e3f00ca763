"""Answers a broken or hostile server sends: two tool calls with one id, usage counts that are
no counts (negative, fractional, text, booleans). Each is a ProviderResponseError naming the
field, never an answer whose calls cannot be told apart or whose usage lifts a budget."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentkit_model_openai import OpenAIModel
from agentkit_model_openai import OpenAIResponsesModel
from agentkit_model_openai import usage_from_openai
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.testing import WireServer

REQUEST = ModelRequest((Message.user("hi"),))


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"model": "m", "choices": [choice], **extra}).encode() + b"\n\n"


async def test_two_calls_with_one_id_are_refused(server: WireServer) -> None:
    message = {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c1")]}
    server.answer({"choices": [{"message": message, "finish_reason": "tool_calls"}]})
    model = OpenAIModel("gpt-4o", base_url=server.url, api_key="")
    with pytest.raises(ProviderResponseError, match=r"tool_calls\[1\]\.id 'c1' repeats the id"):
        await model.request(REQUEST)


async def test_two_streamed_calls_with_one_id_are_refused(server: WireServer) -> None:
    server.events(
        _chunk({"tool_calls": [{"index": 0, **_call("c1")}]}),
        _chunk({"tool_calls": [{"index": 1, **_call("c1")}]}),
        _chunk({}, "tool_calls"),
        b"data: [DONE]\n\n",
    )
    model = OpenAIModel("gpt-4o", base_url=server.url, api_key="")
    with pytest.raises(ProviderResponseError, match="repeats the id"):
        [e async for e in model.stream(REQUEST)]


BAD_COUNTS = [-1, 1.5, "7", True, [3]]


@pytest.mark.parametrize("value", BAD_COUNTS)
async def test_a_usage_count_that_is_no_count_is_refused(server: WireServer, value: Any) -> None:
    message = {"role": "assistant", "content": "ok"}
    usage = {"prompt_tokens": value, "completion_tokens": 1}
    server.answer({"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage})
    model = OpenAIModel("gpt-4o", base_url=server.url, api_key="")
    with pytest.raises(ProviderResponseError, match=r"usage\.prompt_tokens is not a token count"):
        await model.request(REQUEST)


@pytest.mark.parametrize("value", BAD_COUNTS)
async def test_a_streamed_usage_count_that_is_no_count_is_refused(
    server: WireServer, value: Any
) -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": value}
    server.events(_chunk({"content": "ok"}), _chunk({}, "stop", usage=usage), b"data: [DONE]\n\n")
    model = OpenAIModel("gpt-4o", base_url=server.url, api_key="")
    with pytest.raises(ProviderResponseError, match="completion_tokens is not a token count"):
        [e async for e in model.stream(REQUEST)]


async def test_a_responses_usage_count_that_is_no_count_is_refused(server: WireServer) -> None:
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    usage = {"input_tokens": -1_000_000, "output_tokens": 1}
    server.answer({"object": "response", "status": "completed", "output": [item], "usage": usage})
    model = OpenAIResponsesModel("gpt-4.1", base_url=server.url, api_key="sk-test")
    with pytest.raises(ProviderResponseError, match="input_tokens is not a token count"):
        await model.request(REQUEST)


@pytest.mark.parametrize(
    ("details", "key", "path"),
    [
        ("input_tokens_details", "cached_tokens", r"usage\.input_tokens_details\.cached_tokens"),
        ("output_tokens_details", "reasoning_tokens", r"usage\.output_tokens_details\."),
    ],
)
async def test_a_responses_detail_count_is_named_by_its_whole_path(
    server: WireServer, details: str, key: str, path: str
) -> None:
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    usage = {"input_tokens": 5, "output_tokens": 1, details: {key: -3}}
    server.answer({"object": "response", "status": "completed", "output": [item], "usage": usage})
    model = OpenAIResponsesModel("gpt-4.1", base_url=server.url, api_key="sk-test")
    with pytest.raises(ProviderResponseError, match=rf"{path}\w* is not a token count: -3"):
        await model.request(REQUEST)


@given(st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.booleans(), st.none()))
def test_a_count_is_a_whole_number_of_zero_or_more_or_refused(value: Any) -> None:
    try:
        usage = usage_from_openai({"prompt_tokens": value})
    except ProviderResponseError:
        assert type(value) is not int or value < 0
        return
    assert usage.input_tokens == (0 if value is None else value)
    assert type(value) is int or value is None


def test_a_detail_count_that_is_no_count_is_refused_by_its_whole_path() -> None:
    for details, key in (
        ("prompt_tokens_details", "cached_tokens"),
        ("completion_tokens_details", "reasoning_tokens"),
    ):
        path = rf"usage\.{details}\.{key} is not a token count: -3$"
        with pytest.raises(ProviderResponseError, match=path):
            usage_from_openai({"prompt_tokens": 5, details: {key: -3}})


async def test_two_responses_function_calls_with_one_id_are_refused(server: WireServer) -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    output = [{**call, "id": "fc_1"}, {**call, "id": "fc_2"}]
    server.answer({"object": "response", "status": "completed", "output": output})
    model = OpenAIResponsesModel("gpt-4.1", base_url=server.url, api_key="sk-test")
    with pytest.raises(ProviderResponseError, match=r"function_calls\[1\]\.id 'c1' repeats"):
        await model.request(REQUEST)
