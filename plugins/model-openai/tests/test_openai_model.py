"""OpenAIModel against a real HTTP server on 127.0.0.1 playing recorded wire-format answers."""

from __future__ import annotations

import email.utils
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentkit_model_openai import OpenAIModel
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import Invoker
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import OutputSchema
from agentkit_core.plugin import ProviderHTTPError
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import ToolSpec
from agentkit_core.plugin import resolve_model
from agentkit_core.plugin import retry
from agentkit_core.testing import json_values

#: What the provider's errors read their wait from (core's one reader of the headers).
retry_after = ProviderHTTPError.retry_after_of

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}


def ask(text: str = "What is the capital of France?", **kwargs: Any) -> ModelRequest:
    return ModelRequest((Message.system("Be brief."), Message.user(text)), **kwargs)


async def collect(model: OpenAIModel, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in model.stream(request)]


@pytest.fixture
def model(server: Any) -> OpenAIModel:
    return OpenAIModel("gpt-4o-mini", base_url=server.url, api_key="sk-test")


# ---------------------------------------------------------------------- non-streaming


async def test_plain_answer_and_the_body_sent(server: Any, model: OpenAIModel) -> None:
    server.json("plain.json")
    response = await model.request(ask(settings={"temperature": 0.2, "timeout": 5}))
    assert response.message == Message.assistant("The capital of France is Paris.")
    assert response.usage == Usage(24, 8, 1)
    assert response.finish_reason == "stop"
    assert response.model == "gpt-4o-mini-2024-07-18"
    [received] = server.received
    assert (received.method, received.path) == ("POST", "/v1/chat/completions")
    assert received.headers["authorization"] == "Bearer sk-test"
    assert received.json() == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is the capital of France?"},
        ],
        "temperature": 0.2,
    }


async def test_tools_go_out_and_parallel_calls_come_back(server: Any, model: OpenAIModel) -> None:
    server.json("tool_calls.json")
    earlier = ToolCall("call_0", "get_weather", '{"city": "Oslo"}')
    request = ModelRequest(
        (
            Message.user("Weather in Paris and Rome?"),
            Message.assistant("", [earlier]),
            Message.tool("call_0", "snow", name="get_weather"),
        ),
        tools=(WEATHER, ToolSpec("noop")),
    )
    response = await model.request(request)
    assert response.message.tool_calls == (
        ToolCall("call_Wx1", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_Wx2", "get_weather", '{"city": "Rome"}'),
    )
    assert response.finish_reason == "tool_calls"
    body = server.received[0].json()
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": WEATHER.parameters,
            },
        },
        {
            "type": "function",
            "function": {"name": "noop", "parameters": ToolSpec("noop").parameters},
        },
    ]
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "content": "snow", "tool_call_id": "call_0"},
    ]


async def test_structured_output_is_asked_through_response_format(
    server: Any, model: OpenAIModel
) -> None:
    server.json("structured.json")
    response = await model.request(ask(output=OutputSchema("City", CITY, strict=True)))
    assert json.loads(response.message.text) == {"city": "Paris", "population": 2102650}
    assert server.received[0].json()["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "City", "schema": CITY, "strict": True},
    }


async def test_without_native_structured_output_no_response_format_is_sent(server: Any) -> None:
    server.json("structured.json")
    plain = OpenAIModel("llama3", base_url=server.url, structured_output=False)
    await plain.request(ask(output=OutputSchema("City", CITY)))
    assert plain.supports_structured_output is False
    assert "response_format" not in server.received[0].json()
    assert "authorization" not in server.received[0].headers  # no key: a local server


# ---------------------------------------------------------------------- streaming


async def test_stream_text_deltas_usage_and_flags(server: Any, model: OpenAIModel) -> None:
    server.sse("plain.sse")
    events = await collect(model, ask())
    texts = [e.text for e in events if e.kind == "text"]
    assert texts == ["The", " capital", " of", " France", " is", " Paris", "."]
    assert [e.kind for e in events[-1:]] == ["done"]
    done = events[-1].response
    assert done is not None
    assert done.message == Message.assistant("The capital of France is Paris.")
    assert (done.usage, done.finish_reason) == (Usage(24, 8, 1), "stop")
    body = server.received[0].json()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


async def test_stream_ends_with_what_request_would_have_returned(
    server: Any, model: OpenAIModel
) -> None:
    server.json("plain.json")
    server.sse("plain.sse")
    whole = await model.request(ask())
    events = await collect(model, ask())
    assert [e.kind for e in events].count("done") == 1
    assert events[-1].response == whole


async def test_stream_assembles_parallel_tool_calls_by_index(
    server: Any, model: OpenAIModel
) -> None:
    server.sse("parallel_tools.sse")
    events = await collect(model, ask("Weather in Paris, time in Rome?", tools=(WEATHER,)))
    calls = (
        ToolCall("call_Pa1", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_Ro2", "get_time", '{"zone": "Europe/Rome"}'),
    )
    assert [e.tool_call for e in events if e.kind == "tool_call"] == list(calls)
    done = events[-1].response
    assert done is not None
    assert done.message.tool_calls == calls
    assert (done.usage, done.finish_reason) == (Usage(96, 52, 1), "tool_calls")
    assert server.received[0].json()["tools"][0]["function"]["name"] == "get_weather"


async def test_stream_of_whole_tool_calls_without_an_index(server: Any, model: OpenAIModel) -> None:
    server.sse("whole_tool_calls.sse")  # as some local servers send them: one call per chunk
    events = await collect(model, ask(tools=(WEATHER,)))
    done = events[-1].response
    assert done is not None
    assert done.message.tool_calls == (
        ToolCall("call_a", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_b", "get_weather", '{"city": "Rome"}'),
    )


async def test_stream_structured_output(server: Any, model: OpenAIModel) -> None:
    server.sse("structured.sse")
    events = await collect(model, ask(output=OutputSchema("City", CITY, strict=True)))
    done = events[-1].response
    assert done is not None
    assert json.loads(done.message.text) == {"city": "Paris", "population": 2102650}
    assert server.received[0].json()["response_format"]["json_schema"]["name"] == "City"


# ---------------------------------------------------------------------- broken answers


async def test_malformed_json_body_is_a_response_error(server: Any, model: OpenAIModel) -> None:
    server.json("malformed.json")
    with pytest.raises(ProviderResponseError, match=r"answer from http://127.*is not JSON"):
        await model.request(ask())


async def test_malformed_stream_event_is_a_response_error(server: Any, model: OpenAIModel) -> None:
    server.sse("malformed.sse")
    with pytest.raises(ProviderResponseError, match=r"a stream event from .* is not JSON"):
        await collect(model, ask())


async def test_a_malformed_answer_shape_is_a_response_error(
    server: Any, model: OpenAIModel
) -> None:
    server.json("no_choices.json")
    server.events(b'data: {"choices": "none"}\n\n', b"data: [DONE]\n\n")
    with pytest.raises(ProviderResponseError, match="has no choices: The engine is currently"):
        await model.request(ask())
    with pytest.raises(ProviderResponseError, match=r"a stream event from .* is malformed"):
        await collect(model, ask())


def answer_with_call(function: Any, **call: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": None}
    message["tool_calls"] = [{"id": "call_1", "type": "function", "function": function, **call}]
    return {"choices": [{"index": 0, "message": message}]}


def stream_with_call(function: Any, **call: Any) -> list[bytes]:
    delta = {"tool_calls": [{"index": 0, "id": "call_1", "function": function, **call}]}
    chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": "tool_calls"}]}
    return [b"data: " + json.dumps(chunk).encode() + b"\n\n", b"data: [DONE]\n\n"]


BAD_CALLS = [
    (
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {},
        "function.arguments",
        "an object",
    ),
    ({"name": "get_weather", "arguments": 42}, {}, "function.arguments", "a number"),
    ({"name": "get_weather", "arguments": ["x"]}, {}, "function.arguments", "an array"),
    ({"name": 7, "arguments": "{}"}, {}, "function.name", "a number"),
    ({"name": ["get_weather"], "arguments": "{}"}, {}, "function.name", "an array"),
    ({"name": True, "arguments": "{}"}, {}, "function.name", "a boolean"),
    ("get_weather", {}, "function", "a string"),
    ({"name": "get_weather", "arguments": "{}"}, {"id": {"x": 1}}, "id", "an object"),
]


@pytest.mark.parametrize(("function", "call", "field", "kind"), BAD_CALLS)
async def test_a_tool_call_field_of_the_wrong_type_is_named(
    server: Any, model: OpenAIModel, function: Any, call: Any, field: str, kind: str
) -> None:
    server.answer(answer_with_call(function, **call))
    where = re.escape(f"choices[0].message.tool_calls[0].{field} is {kind}")
    with pytest.raises(ProviderResponseError, match=where):
        await model.request(ask(tools=(WEATHER,)))
    server.events(*stream_with_call(function, **call))
    where = re.escape(f"choices[0].delta.tool_calls[0].{field} is {kind}")
    with pytest.raises(ProviderResponseError, match=rf"stream event 1: {where}"):
        await collect(model, ask(tools=(WEATHER,)))


JSON = json_values(keys=st.text(max_size=4), max_leaves=6)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=JSON, arguments=JSON, call_id=JSON)
async def test_any_tool_call_shape_is_a_tool_call_or_an_error_naming_the_field(
    server: Any, model: OpenAIModel, name: Any, arguments: Any, call_id: Any
) -> None:
    server.answer(answer_with_call({"name": name, "arguments": arguments}, id=call_id))
    fields = {"id": call_id, "function.name": name, "function.arguments": arguments}
    wrong = [f for f, v in fields.items() if v is not None and not isinstance(v, str)]
    if wrong:
        with pytest.raises(ProviderResponseError, match=re.escape(f"tool_calls[0].{wrong[0]} is")):
            await model.request(ask(tools=(WEATHER,)))
    elif not name:
        with pytest.raises(ProviderResponseError, match=r"tool_calls\[0\] has no function\.name"):
            await model.request(ask(tools=(WEATHER,)))
    else:
        (call,) = (await model.request(ask(tools=(WEATHER,)))).message.tool_calls
        assert all(isinstance(v, str) for v in (call.id, call.name, call.arguments))
        assert (call.name, call.arguments) == (name, arguments or "{}")


async def test_tool_calls_that_are_not_a_list_of_objects_are_named(
    server: Any, model: OpenAIModel
) -> None:
    body = {"choices": [{"message": {"role": "assistant", "tool_calls": {"id": "x"}}}]}
    server.answer(body)
    with pytest.raises(ProviderResponseError, match=r"message\.tool_calls is an object, expected"):
        await model.request(ask(tools=(WEATHER,)))
    body = {"choices": [{"message": {"role": "assistant", "tool_calls": ["get_weather"]}}]}
    server.answer(body)
    with pytest.raises(ProviderResponseError, match=r"tool_calls\[0\] is a string, expected"):
        await model.request(ask(tools=(WEATHER,)))


async def test_truncated_stream_is_an_error_not_a_partial_answer(
    server: Any, model: OpenAIModel
) -> None:
    server.sse("truncated.sse")
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderResponseError, match=r"ended after 4 events without \[DONE\]"):
        async for event in model.stream(ask()):
            seen.append(event)
    assert [e.text for e in seen] == ["The", " capital", " of"]


async def test_connection_dropped_mid_stream(server: Any, model: OpenAIModel) -> None:
    server.sse("plain.sse", drop_after=3)
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError, match="dropped mid-stream after 3 events") as caught:
        async for event in model.stream(ask()):
            seen.append(event)
    assert caught.value.retryable
    assert [e.kind for e in seen] == ["text", "text"]


async def test_connection_dropped_mid_body(server: Any, model: OpenAIModel) -> None:
    server.json("plain.json", drop=True)
    with pytest.raises(ProviderError, match="failed: RemoteProtocolError") as caught:
        await model.request(ask())
    assert caught.value.retryable


async def test_an_error_event_inside_a_stream(server: Any, model: OpenAIModel) -> None:
    server.events(
        b'data: {"choices":[{"index":0,"delta":{"content":"Par"}}]}\n\n',
        b'data: {"error":{"message":"The model is overloaded.","type":"server_error"}}\n\n',
    )
    with pytest.raises(ProviderError, match=r"error mid-stream: The model is overloaded\."):
        await collect(model, ask())


async def test_a_timeout_is_a_retryable_error_and_not_sent_in_the_body(server: Any) -> None:
    slow = OpenAIModel("m", base_url=server.url, timeout=60)
    server.json("plain.json", delay=3.0)
    # 1 s, not 0.2: under CI's load connecting to the local server once took longer than 0.2 s
    with pytest.raises(ProviderError, match=r"no answer within 1(\.0)?s \(ReadTimeout\)") as caught:
        await slow.request(ask(settings={"timeout": 1.0}))
    assert caught.value.retryable
    assert "timeout" not in server.received[0].json()


async def test_connection_refused_names_the_url() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    closed = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ProviderError, match=rf"127.0.0.1:{port}/v1/chat/completions failed: Conn"):
        await closed.request(ask())


# ---------------------------------------------------------------------- HTTP errors and retries


async def test_a_400_carries_the_providers_message_and_is_not_retried(
    server: Any, model: OpenAIModel
) -> None:
    server.json("error_400.json", status=400)
    server.json("plain.json")
    invoker = Invoker(model, [retry(3, base_delay=0.01)])
    with pytest.raises(ProviderHTTPError, match=r"HTTP 400 .*Invalid value for 'temperature'") as e:
        await invoker.chat(ask(settings={"temperature": 7}))
    assert (e.value.status, e.value.retryable) == (400, False)
    assert e.value.provider_message.startswith("Invalid value for 'temperature'")
    assert len(server.received) == 1


async def test_a_401_hints_at_the_key(server: Any, model: OpenAIModel) -> None:
    server.json("error_401.json", status=401)
    with pytest.raises(
        ProviderHTTPError, match=r"HTTP 401 .*: unauthorized \(check OPENAI_API_KEY"
    ):
        await model.request(ask())


async def test_429_waits_for_retry_after_then_succeeds(server: Any, model: OpenAIModel) -> None:
    server.json("error_429.json", status=429, headers={"Retry-After": "1"})
    server.json("plain.json")
    invoker = Invoker(model, [retry(3, base_delay=0.01)])
    response = await invoker.chat(ask())
    assert response.message.text == "The capital of France is Paris."
    first, second = server.received
    assert second.at - first.at >= 0.95  # the backoff alone would have waited 0.01s


async def test_500_then_success(server: Any, model: OpenAIModel) -> None:
    server.json("error_500.json", status=500)
    server.json("plain.json")
    response = await Invoker(model, [retry(3, base_delay=0.01)]).chat(ask())
    assert response.usage == Usage(24, 8, 1)
    assert len(server.received) == 2


async def test_5xx_every_time_gives_up_after_the_attempts(server: Any, model: OpenAIModel) -> None:
    for _ in range(3):
        server.json("error_500.json", status=503)
    with pytest.raises(ProviderHTTPError, match=r"HTTP 503 .*had an error") as caught:
        await Invoker(model, [retry(2, base_delay=0.01)]).chat(ask())
    assert caught.value.retryable
    assert len(server.received) == 2


async def test_a_429_on_a_stream_carries_retry_after(server: Any, model: OpenAIModel) -> None:
    server.json("error_429.json", status=429, headers={"retry-after-ms": "250"})
    with pytest.raises(ProviderHTTPError, match=r"HTTP 429 .*Rate limit reached") as caught:
        await collect(model, ask())
    assert (caught.value.retryable, caught.value.retry_after) == (True, 0.25)


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    assert retry_after(httpx.Headers({"Retry-After": "7"})) == 7.0
    assert retry_after(httpx.Headers({"retry-after-ms": "1500", "Retry-After": "9"})) == 1.5
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    wait = retry_after(httpx.Headers({"Retry-After": date}))
    assert wait is not None and 25 < wait <= 30
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert retry_after(httpx.Headers({"Retry-After": past})) == 0.0
    assert retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after(httpx.Headers({})) is None


# ---------------------------------------------------------------------- configuration


def test_model_string_and_environment(monkeypatch: pytest.MonkeyPatch, pm) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    model = resolve_model("openai:llama3.2", manager=pm)
    assert isinstance(model, OpenAIModel)
    assert model.name == "openai:llama3.2"
    assert model.url == "http://localhost:11434/v1/chat/completions"
    assert model.headers["Authorization"] == "Bearer sk-env"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert OpenAIModel("gpt-4o").url == "https://api.openai.com/v1/chat/completions"


def test_bad_configuration_names_the_value_and_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:8080")
    with pytest.raises(ConfigError, match=r"\$OPENAI_BASE_URL 'localhost:8080' is not an http"):
        OpenAIModel("m")
    with pytest.raises(ConfigError, match="base_url= 'ftp://x' is not an http"):
        OpenAIModel("m", base_url="ftp://x")
    with pytest.raises(ConfigError, match="timeout must be a positive number of seconds, got 0"):
        OpenAIModel("m", base_url="http://x", timeout=0)


async def test_bad_request_timeout_is_a_config_error(model: OpenAIModel) -> None:
    with pytest.raises(ConfigError, match=r"settings\['timeout'\] must be a positive .* got 'x'"):
        await model.request(ask(settings={"timeout": "x"}))


async def test_async_with_shares_one_pool_and_closes_it(server: Any) -> None:
    server.json("plain.json")
    server.sse("plain.sse")
    async with OpenAIModel("m", base_url=server.url) as model:
        pool = model._owned
        assert pool is not None
        await model.request(ask())
        await collect(model, ask())
        assert model._owned is pool
    assert model._owned is None and pool.is_closed


async def test_a_client_passed_in_is_used_and_left_open(server: Any) -> None:
    server.json("plain.json")
    async with httpx.AsyncClient(headers={"X-Trace": "t1"}) as client:
        model = OpenAIModel("m", base_url=server.url, client=client)
        async with model:
            await model.request(ask())
        assert not client.is_closed
    assert server.received[0].headers["x-trace"] == "t1"


def test_importing_the_plugin_does_not_import_httpx() -> None:
    code = "import sys, agentkit_model_openai; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------- usage details


RECORDINGS = Path(__file__).parent / "recordings"
CACHED_REASONING = Usage(2048, 140, 1, cache_read_tokens=1920, reasoning_tokens=128)


async def test_cached_and_reasoning_tokens_are_in_usage(server: Any, model: OpenAIModel) -> None:
    server.json("cached_reasoning.json")
    response = await model.request(ask())
    assert response.usage == CACHED_REASONING


async def test_a_streams_usage_chunk_carries_cached_and_reasoning_tokens(
    server: Any, model: OpenAIModel
) -> None:
    usage = json.loads((RECORDINGS / "cached_reasoning.json").read_text())["usage"]
    server.events(
        b'data: {"choices":[{"index":0,"delta":{"content":"Paris."}}]}\n\n',
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        b'data: {"choices":[],"usage":' + json.dumps(usage).encode() + b"}\n\n",
        b"data: [DONE]\n\n",
    )
    *_, done = await collect(model, ask())
    assert done.response is not None and done.response.usage == CACHED_REASONING
