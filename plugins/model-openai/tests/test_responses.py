"""OpenAIResponsesModel against a real HTTP server on 127.0.0.1 playing recorded Responses API
answers (JSON bodies and SSE streams written from the API reference)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentkit_model_openai import OpenAIResponsesModel

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import OutputSchema
from agentkit_core.plugin import ProviderHTTPError
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import ToolSpec
from agentkit_core.plugin import decode_state
from agentkit_core.plugin import encode_state
from agentkit_core.plugin import resolve_model

RECORDINGS = Path(__file__).parent / "recordings"
WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CITY = OutputSchema(
    "city_info",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"],
        "additionalProperties": False,
    },
    strict=True,
)


def recorded(name: str) -> Any:
    return json.loads((RECORDINGS / name).read_text())


def ask(text: str = "What is the capital of France?", **kwargs: Any) -> ModelRequest:
    return ModelRequest((Message.system("Be brief."), Message.user(text)), **kwargs)


async def collect(model: OpenAIResponsesModel, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in model.stream(request)]


@pytest.fixture
def model(server: Any) -> OpenAIResponsesModel:
    return OpenAIResponsesModel("gpt-4.1-mini", base_url=server.url, api_key="sk-test")


# ---------------------------------------------------------------------- requests


async def test_plain_answer_and_the_body_sent(server: Any, model: OpenAIResponsesModel) -> None:
    server.json("responses_plain.json")
    settings = {"temperature": 0.2, "max_tokens": 300, "seed": 7, "timeout": 5}
    response = await model.request(ask(settings=settings))  # type: ignore[arg-type]
    assert response.message == Message.assistant("The capital of France is Paris.")
    assert REASONING not in response.message.metadata
    assert (response.usage, response.finish_reason) == (Usage(36, 8, 1), "stop")
    assert response.model == "gpt-4.1-mini-2025-04-14"
    [received] = server.received
    assert (received.method, received.path) == ("POST", "/v1/responses")
    assert received.headers["authorization"] == "Bearer sk-test"
    assert received.json() == {
        "model": "gpt-4.1-mini",
        "input": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is the capital of France?"},
        ],
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "temperature": 0.2,
        "max_output_tokens": 300,  # seed: no such field on this API, left out
    }


async def test_parallel_function_calls_and_the_tools_sent(
    server: Any, model: OpenAIResponsesModel
) -> None:
    server.json("responses_parallel_tools.json")
    choice: ModelSettings = {"tool_choice": "get_weather", "parallel_tool_calls": True}
    request = ask("Weather in Paris, time in Rome?", tools=(WEATHER,), settings=choice)
    response = await model.request(request)
    assert response.message.tool_calls == (
        ToolCall("call_Pa1weather", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_Ro2time", "get_time", '{"zone": "Europe/Rome"}'),
    )
    assert response.finish_reason == "tool_calls"
    body = server.received[0].json()
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": WEATHER.parameters,
            "strict": False,
        }
    ]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["parallel_tool_calls"] is True


async def test_structured_output_goes_as_text_format(
    server: Any, model: OpenAIResponsesModel
) -> None:
    server.json("responses_structured.json")
    response = await model.request(ask("Paris?", output=CITY))
    assert json.loads(response.message.text) == {"city": "Paris", "population": 2102650}
    assert server.received[0].json()["text"] == {
        "format": {
            "type": "json_schema",
            "name": "city_info",
            "schema": CITY.schema,
            "strict": True,
        }
    }
    unsupported = OpenAIResponsesModel(
        "m", base_url=server.url, api_key="k", structured_output=False
    )
    assert "text" not in unsupported.body(ask(output=CITY))


async def test_reasoning_usage_and_summary_option(server: Any) -> None:
    server.json("responses_reasoning_calls.json")
    model = OpenAIResponsesModel(
        "o4-mini", base_url=server.url, api_key="k", reasoning_summary="auto"
    )
    response = await model.request(ask(tools=(WEATHER,), settings={"reasoning_effort": "high"}))
    assert response.usage == Usage(
        1312, 214, 1, cache_read_tokens=1152, cache_write_tokens=0, reasoning_tokens=128
    )
    output = recorded("responses_reasoning_calls.json")["output"]
    assert response.message.metadata[REASONING] == {
        "model": "openai-responses:o4-mini",
        "output": output,
    }
    assert server.received[0].json()["reasoning"] == {"effort": "high", "summary": "auto"}


# ---------------------------------------------------------------------- the reasoning round trip


def get_weather(city: str) -> str:
    """The weather in a city."""
    return "18C, cloudy"


def get_time(zone: str) -> str:
    """The time in a time zone."""
    return "14:05"


@pytest.mark.parametrize("stream", [False, True])
async def test_turn_two_sends_turn_ones_reasoning_back_by_value(server: Any, stream: bool) -> None:
    """A two-turn tool run: the second request carries the first answer's reasoning item (with
    its encrypted content) and function calls verbatim, in the API's order, then the results."""
    for name in ("responses_reasoning_calls", "responses_reasoning_answer"):
        if stream:
            server.sse(name + ".sse")
        else:
            server.json(name + ".json")
    model = OpenAIResponsesModel("o4-mini", base_url=server.url, api_key="k")
    agent = Agent("weather", model, "Be brief.", [get_weather, get_time], hooks=Hooks())
    if stream:
        events = [e async for e in agent.run_stream("Weather in Paris, time in Rome?")]
        result = events[-1].result
    else:
        result = await agent.run("Weather in Paris, time in Rome?")
    assert result.output == "Paris: 18°C and cloudy. Rome: 14:05."
    assert result.usage.reasoning_tokens == 128 + 64
    assert result.usage.cache_read_tokens == 1152 + 1280
    first, second = (r.json() for r in server.received)
    turn_one = recorded("responses_reasoning_calls.json")["output"]
    assert second["store"] is False
    assert second["input"][: len(first["input"])] == first["input"]
    assert second["input"][len(first["input"]) :] == [
        *turn_one,  # reasoning with encrypted_content, then both calls with their ids
        {"type": "function_call_output", "call_id": "call_Wx9Paris", "output": "18C, cloudy"},
        {"type": "function_call_output", "call_id": "call_Tm4Rome", "output": "14:05"},
    ]
    assert turn_one[0]["type"] == "reasoning" and turn_one[0]["encrypted_content"]


async def test_reasoning_survives_a_checkpoint_encoding(server: Any) -> None:
    server.json("responses_reasoning_calls.json")
    model = OpenAIResponsesModel("o4-mini", base_url=server.url, api_key="k")
    message = (await model.request(ask(tools=(WEATHER,)))).message
    restored = decode_state(encode_state({"messages": [message]}))["messages"][0]
    assert restored == message and restored.metadata == message.metadata
    assert (
        model.body(ModelRequest((restored,)))["input"]
        == model.body(ModelRequest((message,)))["input"]
    )


async def test_another_models_reasoning_is_not_sent(server: Any) -> None:
    server.json("responses_reasoning_calls.json")
    o4 = OpenAIResponsesModel("o4-mini", base_url=server.url, api_key="k")
    message = (await o4.request(ask(tools=(WEATHER,)))).message
    other = OpenAIResponsesModel("o3", base_url=server.url, api_key="k")
    assert other.body(ModelRequest((message,)))["input"] == [
        {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
        for c in message.tool_calls
    ]


# ---------------------------------------------------------------------- streaming


async def test_stream_text_deltas_then_done(server: Any, model: OpenAIResponsesModel) -> None:
    server.sse("responses_plain.sse")
    events = await collect(model, ask())
    texts = [e.text for e in events if e.kind == "text"]
    assert len(texts) > 1 and "".join(texts) == "The capital of France is Paris."
    assert [e.kind for e in events[len(texts) :]] == ["done"]
    done = events[-1].response
    assert done is not None and done.usage == Usage(36, 8, 1)
    assert server.received[0].json()["stream"] is True


async def test_stream_yields_each_call_when_its_item_is_done(
    server: Any, model: OpenAIResponsesModel
) -> None:
    server.sse("responses_reasoning_calls.sse")
    events = await collect(model, ask(tools=(WEATHER,)))
    calls = [e.tool_call for e in events if e.kind == "tool_call"]
    done = events[-1].response
    assert done is not None and tuple(calls) == done.message.tool_calls
    assert [c.arguments for c in calls] == ['{"city":"Paris"}', '{"zone":"Europe/Rome"}']
    assert done.message.metadata[REASONING]["output"][0]["summary"][0]["text"].startswith(
        "**Planning"
    )
    assert done.usage.reasoning_tokens == 128
    # the summary streamed first, as reasoning deltas, and is the one kept with the item
    kinds = [e.kind for e in events if e.kind != "tool_call_delta"]  # (test_responses_deltas)
    assert kinds == ["reasoning"] * 3 + ["tool_call", "tool_call", "done"]
    assert "".join(e.text for e in events if e.kind == "reasoning") == summary_text(done)


def summary_text(response: Any) -> str:
    """The reasoning summaries kept in the answer's metadata, joined."""
    items = response.message.metadata[REASONING]["output"]
    return "".join(s["text"] for i in items if i["type"] == "reasoning" for s in i["summary"])


async def test_stream_reasoning_summary_deltas_then_the_text(
    server: Any, model: OpenAIResponsesModel
) -> None:
    """Every summary part's deltas come as reasoning events; the text deltas are as before."""
    server.json("responses_reasoning_summary.json")
    server.sse("responses_reasoning_summary.sse")
    whole = await model.request(ask())
    events = await collect(model, ask())
    assert [(e.kind, e.text) for e in events[:-1]] == [
        ("reasoning", "**Reading the tool results**\n\nParis"),
        ("reasoning", " is 18\u00b0C and cloudy;"),
        ("reasoning", " Rome's clock says 14:05."),
        ("reasoning", "**Answering**\n\nOne line"),
        ("reasoning", " per city."),
        ("text", "Paris: 18"),
        ("text", "\u00b0C and cl"),
        ("text", "oudy. Rom"),
        ("text", "e: 14:05."),
    ]
    done = events[-1].response
    assert done is not None and done.message == whole.message
    assert "".join(e.text for e in events if e.kind == "reasoning") == summary_text(done)
    assert done.message.text == "Paris: 18\u00b0C and cloudy. Rome: 14:05."


async def test_a_stream_cut_mid_event_is_a_retryable_error(
    server: Any, model: OpenAIResponsesModel
) -> None:
    server.sse("responses_plain.sse", drop_after=5)
    with pytest.raises(
        ProviderError, match=r"dropped mid-stream|without response.completed"
    ) as exc:
        await collect(model, ask())
    assert exc.value.retryable


async def test_a_stream_that_ends_before_its_final_event(
    server: Any, model: OpenAIResponsesModel
) -> None:
    events = (RECORDINGS / "responses_plain.sse").read_bytes().split(b"\n\n")
    server.events(*(e + b"\n\n" for e in events[:-2] if e))  # no response.completed
    with pytest.raises(ProviderResponseError, match=r"without response.completed") as exc:
        await collect(model, ask())
    assert exc.value.retryable


async def test_response_failed_and_error_events(server: Any, model: OpenAIResponsesModel) -> None:
    server.sse("responses_failed.sse")
    with pytest.raises(ProviderError, match=r"failed to generate a response.*server_error") as exc:
        await collect(model, ask())
    assert exc.value.retryable and not isinstance(exc.value, ProviderResponseError)
    server.events(
        b'event: error\ndata: {"type":"error","code":"invalid_prompt","message":"Bad prompt.",'
        b'"param":null,"sequence_number":1}\n\n'
    )
    with pytest.raises(ProviderError, match=r"Bad prompt.*invalid_prompt") as exc:
        await collect(model, ask())
    assert not exc.value.retryable
    server.events(b"event: response.created\ndata: {not json\n\n")
    with pytest.raises(ProviderResponseError, match=r"not JSON"):
        await collect(model, ask())


# ---------------------------------------------------------------------- errors


async def test_429_with_retry_after(server: Any, model: OpenAIResponsesModel) -> None:
    server.json("error_429.json", status=429, headers={"Retry-After": "7"})
    with pytest.raises(ProviderHTTPError, match=r"HTTP 429.*Rate limit") as exc:
        await model.request(ask())
    assert (exc.value.status, exc.value.retry_after, exc.value.retryable) == (429, 7.0, True)


async def test_500_and_a_malformed_body(server: Any, model: OpenAIResponsesModel) -> None:
    server.json("error_500.json", status=500)
    with pytest.raises(ProviderHTTPError) as exc:
        await collect(model, ask())
    assert exc.value.status == 500 and exc.value.retryable
    server.json("malformed.json")
    with pytest.raises(ProviderResponseError, match=r"not JSON"):
        await model.request(ask())
    server.answer({"output": "nope"})
    with pytest.raises(ProviderResponseError, match=r"not a response object"):
        await model.request(ask())
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": {"a": 1}}
    server.answer({"status": "completed", "output": [call]})
    with pytest.raises(ProviderResponseError, match=r"output\[0\].arguments is .*JSON text"):
        await model.request(ask())


async def test_a_failed_response_body(server: Any, model: OpenAIResponsesModel) -> None:
    server.json("responses_failed.json")
    with pytest.raises(ProviderError, match=r"server_error") as exc:
        await model.request(ask())
    assert exc.value.retryable


async def test_incomplete_responses(server: Any, model: OpenAIResponsesModel) -> None:
    server.json("responses_length.json")
    response = await model.request(ask())
    assert (response.message.text, response.finish_reason) == ("The capital of France is", "length")
    server.json("responses_incomplete.json")
    with pytest.raises(ProviderResponseError, match=r"incomplete .max_output_tokens.*max_tokens"):
        await model.request(ask())
    server.sse("responses_incomplete.sse")
    with pytest.raises(ProviderResponseError, match=r"incomplete"):
        await collect(model, ask())


def test_a_missing_api_key_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    pm,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError) as exc:
        resolve_model("openai-responses:o4-mini", manager=pm)
    assert "\n" not in str(exc.value) and "OPENAI_API_KEY" in str(exc.value)
    local = OpenAIResponsesModel("m", base_url="http://127.0.0.1:1/v1")  # a local server: fine
    assert local.url == "http://127.0.0.1:1/v1/responses"


def test_options_are_checked(monkeypatch: pytest.MonkeyPatch, pm) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(ConfigError, match=r"reasoning_summary.*'short'"):
        OpenAIResponsesModel("o4-mini", reasoning_summary="short")
    with pytest.raises(ConfigError, match=r"'temprature'.*extra_body"):
        OpenAIResponsesModel("o4-mini").body(ask(settings={"temprature": 1}))  # type: ignore[typeddict-unknown-key]
    model = resolve_model("openai-responses:o4-mini", manager=pm)
    assert isinstance(model, OpenAIResponsesModel) and model.name == "openai-responses:o4-mini"


def test_importing_the_plugin_imports_neither_httpx_nor_the_responses_module() -> None:
    code = (
        "import sys, agentkit_model_openai as m; m.agentkit_register_models(lambda *a, **k: None); "
        "print(sorted(n for n in ('httpx', 'openai', 'agentkit_model_openai._responses') "
        "if n in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
