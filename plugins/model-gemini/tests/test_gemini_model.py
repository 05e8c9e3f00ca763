"""GeminiModel: the real google-genai client against 127.0.0.1 playing recorded answers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentkit_model_gemini import GeminiBlockedError
from agentkit_model_gemini import GeminiModel

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ModelDeadlineExceeded
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import Invoker
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import OutputSchema
from agentkit_core.plugin import ProviderHTTPError
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import ToolSpec
from agentkit_core.plugin import encode_state
from agentkit_core.plugin import resolve_model
from agentkit_core.plugin import retry

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ToolSpec(
    "get_time",
    "The time in a zone.",
    {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
)
RECORDINGS = Path(__file__).parent / "recordings"
SIGNATURE_CALL = "CiQBcsjacGFyYWxsZWwtY2FsbC1zaWduYXR1cmUtMDAwMQ=="
SIGNATURE_ONE = "Cr4CAcsjdGhpbmtpbmctc2lnbmF0dXJlLW9uZQA="
SIGNATURE_TWO = "CpcBAcsjdGhpbmtpbmctc2lnbmF0dXJlLXR3bw=="


def recording(name: str) -> bytes:
    return (RECORDINGS / name).read_bytes()


QUESTION = [{"role": "user", "parts": [{"text": "What is the capital of France?"}]}]


def ask(text: str = "What is the capital of France?", **kwargs: Any) -> ModelRequest:
    return ModelRequest((Message.system("Be brief."), Message.user(text)), **kwargs)


async def collect(model: GeminiModel, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in model.stream(request)]


@pytest.fixture
def model(server: Any) -> GeminiModel:
    return GeminiModel("gemini-2.5-flash", base_url=server.url, api_key="test-key")


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny, 21 °C in {city}"


# ---------------------------------------------------------------------- requests


async def test_plain_answer_and_the_request_sent(server: Any, model: GeminiModel) -> None:
    server.json("plain.json")
    settings = {"temperature": 0.2, "max_tokens": 64, "stop": ["END"], "top_k": 5}
    response = await model.request(ask(settings=settings))  # type: ignore[arg-type]
    assert response.message == Message.assistant("The capital of France is Paris.")
    assert REASONING not in response.message.metadata
    assert response.usage == Usage(14, 8, 1)
    assert (response.finish_reason, response.model) == ("stop", "gemini-2.5-flash")
    [received] = server.received
    assert received.method == "POST"
    assert received.path == "/v1/models/gemini-2.5-flash:generateContent"  # the SDK's version
    assert received.headers["x-goog-api-key"] == "test-key"
    body = received.json()
    assert body["contents"] == QUESTION
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    config = body["generationConfig"]
    assert (config["temperature"], config["maxOutputTokens"], config["topK"]) == (0.2, 64, 5)
    assert config["stopSequences"] == ["END"]
    assert config["thinkingConfig"] == {"include_thoughts": True}


async def test_parallel_tool_calls_without_ids_get_ids_and_keep_their_signature(
    server: Any, model: GeminiModel
) -> None:
    server.json("parallel_tools.json")
    response = await model.request(ask(tools=(WEATHER, TIME), settings={"tool_choice": "required"}))
    message = response.message
    assert message.tool_calls == (
        ToolCall("call_0", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_1", "get_time", '{"zone": "Europe/Rome"}'),
    )
    assert response.finish_reason == "tool_calls"
    assert message.metadata[REASONING] == {
        "model": "gemini:gemini-2.5-flash",
        "parts": [{"call": "call_0", "signature": SIGNATURE_CALL}, {"call": "call_1"}],
    }
    assert message.metadata["gemini"] == {"generated_ids": ["call_0", "call_1"]}
    # thoughts count as output (agentkit's rule) and as reasoning
    assert response.usage == Usage(96, 31 + 64, 1, reasoning_tokens=64)
    body = server.received[0].json()
    [tools] = body["tools"]
    assert [d["name"] for d in tools["functionDeclarations"]] == ["get_weather", "get_time"]
    assert tools["functionDeclarations"][0]["parameters_json_schema"] == WEATHER.parameters
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


async def test_a_tool_named_in_tool_choice_is_the_only_one_allowed(
    server: Any, model: GeminiModel
) -> None:
    server.json("parallel_tools.json")
    await model.request(ask(tools=(WEATHER, TIME), settings={"tool_choice": "get_time"}))
    calling = server.received[0].json()["toolConfig"]["functionCallingConfig"]
    assert calling == {"mode": "ANY", "allowedFunctionNames": ["get_time"]}


async def test_structured_output_sends_the_json_schema(server: Any, model: GeminiModel) -> None:
    server.json("structured.json")
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    response = await model.request(ask(output=OutputSchema("city", schema)))
    assert json.loads(response.message.text)["city"] == "Paris"
    config = server.received[0].json()["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema


async def test_thinking_round_trip_sends_the_first_turns_parts_back_exactly(server: Any) -> None:
    """Turn 2 carries turn 1's thought summary and its signed call as the API sent them."""
    model = GeminiModel("gemini-3-pro-preview", base_url=server.url, api_key="test-key")
    server.json("thinking_tool_call.json")
    server.json("thinking_answer.json")
    agent = Agent("weather", model, "Be brief.", tools=[get_weather], hooks=Hooks())
    result = await agent.run("Weather in Paris?")
    assert result.output == "It is sunny in Paris, 21 °C."
    first_turn = json.loads(recording("thinking_tool_call.json"))["candidates"][0]["content"]
    contents = server.received[1].json()["contents"]
    assert contents == [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        first_turn,
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "fc_7a1",
                        "name": "get_weather",
                        "response": {"result": "sunny, 21 °C in Paris"},
                    }
                }
            ],
        },
    ]
    # the run sums usage, cached and reasoning tokens included
    assert result.usage == Usage(120 + 2210, 18 + 210 + 12 + 40, 2, 2048, 0, 210 + 40)
    # the reasoning survives the state encoder (checkpoints, sessions)
    final = result.transcript[-1]
    assert final.metadata[REASONING]["parts"][-1] == {"text": 28, "signature": SIGNATURE_TWO}
    json.dumps(encode_state(result.transcript))


async def test_reasoning_of_another_model_is_not_sent(server: Any, model: GeminiModel) -> None:
    server.json("plain.json")
    theirs = Message.assistant("Hi.")
    theirs.metadata[REASONING] = {"model": "gemini:other", "parts": [{"thought": "secret"}]}
    await model.request(ModelRequest((Message.user("Hi"), theirs, Message.user("Again"))))
    assert server.received[0].json()["contents"][1] == {"role": "model", "parts": [{"text": "Hi."}]}


async def test_generated_ids_are_left_out_when_the_turn_goes_back(
    server: Any, model: GeminiModel
) -> None:
    server.json("parallel_tools.json")
    server.json("plain.json")
    first = await model.request(ask(tools=(WEATHER, TIME)))
    answers = [Message.tool(c.id, "ok", name=c.name) for c in first.message.tool_calls]
    await model.request(ModelRequest((Message.user("q"), first.message, *answers)))
    model_turn, results = server.received[1].json()["contents"][1:]
    assert model_turn["parts"][0] == {
        "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
        "thoughtSignature": SIGNATURE_CALL,
    }
    assert [p["functionResponse"] for p in results["parts"]] == [
        {"name": "get_weather", "response": {"result": "ok"}},
        {"name": "get_time", "response": {"result": "ok"}},
    ]


# ---------------------------------------------------------------------- streaming


async def test_stream_text_thoughts_and_the_late_signature(server: Any) -> None:
    model = GeminiModel("gemini-3-pro-preview", base_url=server.url, api_key="test-key")
    server.sse("thinking.sse")
    events = await collect(model, ask())
    assert [(e.kind, e.text) for e in events[:-1]] == [
        ("reasoning", "**Answering**\nThe tool"),  # the thought parts, as they come
        ("reasoning", " said sunny."),
        ("text", "It is sunny"),
        ("text", " in Paris, 21 °C."),
    ]
    done = events[-1].response
    assert done is not None and done.message.text == "It is sunny in Paris, 21 °C."
    assert done.message.metadata[REASONING]["parts"] == [
        {"thought": "**Answering**\nThe tool said sunny."},
        {"text": 28, "signature": SIGNATURE_TWO},
    ]
    thoughts = [p["thought"] for p in done.message.metadata[REASONING]["parts"] if "thought" in p]
    assert "".join(e.text for e in events if e.kind == "reasoning") == "".join(thoughts)
    assert done.usage == Usage(2210, 52, 1, cache_read_tokens=2048, reasoning_tokens=40)
    assert server.received[0].path.endswith(":streamGenerateContent?alt=sse")
    # streamed and whole, the same answer carries the same reasoning
    server.json("thinking_answer.json")
    whole = await model.request(ask())
    assert whole.message.metadata[REASONING] == done.message.metadata[REASONING]


async def test_stream_yields_each_tool_call_as_it_arrives(server: Any, model: GeminiModel) -> None:
    server.sse("parallel_tools.sse")
    events = await collect(model, ask(tools=(WEATHER, TIME)))
    assert [e.kind for e in events] == ["tool_call", "tool_call", "done"]


async def test_stream_stopped_by_recitation_keeps_its_text_as_content_filter(
    server: Any, model: GeminiModel
) -> None:
    server.sse("recitation.sse")
    events = await collect(model, ask())
    done = events[-1].response
    assert done is not None and done.finish_reason == "content_filter"
    assert done.message.text == "It was the best of times,"


# ---------------------------------------------------------------------- failures


async def test_429_resource_exhausted_is_retryable_with_the_retry_delay(
    server: Any, model: GeminiModel
) -> None:
    server.json("error_429.json", status=429)
    with pytest.raises(ProviderHTTPError) as caught:
        await model.request(ask())
    error = caught.value
    assert (error.status, error.retryable, error.retry_after) == (429, True, 37.0)
    assert "RESOURCE_EXHAUSTED" in str(error) and "quota" in error.provider_message


async def test_retry_after_header_wins_over_the_body(server: Any, model: GeminiModel) -> None:
    server.json("error_429.json", status=429, headers={"Retry-After": "3"})
    with pytest.raises(ProviderHTTPError) as caught:
        await model.request(ask())
    assert caught.value.retry_after == 3.0


@pytest.mark.parametrize(("name", "status"), [("error_500.json", 500), ("error_503.json", 503)])
async def test_server_errors_are_retryable(
    server: Any, model: GeminiModel, name: str, status: int
) -> None:
    server.json(name, status=status)
    with pytest.raises(ProviderHTTPError) as caught:
        await model.request(ask())
    assert (caught.value.status, caught.value.retryable) == (status, True)


async def test_bad_api_key_is_final_and_says_so(server: Any, model: GeminiModel) -> None:
    server.json("error_api_key.json", status=400)
    with pytest.raises(ProviderHTTPError) as caught:
        await model.request(ask())
    assert caught.value.retryable is False
    assert "API key not valid" in str(caught.value)


async def test_the_retry_middleware_waits_and_tries_again(server: Any, model: GeminiModel) -> None:
    server.json("error_503.json", status=503, headers={"Retry-After": "0"})
    server.json("plain.json")
    response = await Invoker(model, [retry(base_delay=0.01)]).chat(ask())
    assert response.message.text == "The capital of France is Paris."
    assert len(server.received) == 2


async def test_a_body_that_is_not_json_is_a_response_error(server: Any, model: GeminiModel) -> None:
    server.json("malformed.json")
    with pytest.raises(ProviderResponseError, match="not what the Gemini API sends"):
        await model.request(ask())


async def test_fields_of_the_wrong_type_are_a_response_error(
    server: Any, model: GeminiModel
) -> None:
    server.json("wrong_types.json")
    with pytest.raises(ProviderResponseError):
        await model.request(ask())


async def test_a_stream_event_that_is_not_json_is_a_response_error(
    server: Any, model: GeminiModel
) -> None:
    server.sse("malformed.sse")
    with pytest.raises(ProviderResponseError, match="stream event") as caught:
        await collect(model, ask())
    assert caught.value.retryable is False


async def test_a_stream_cut_mid_answer_is_a_retryable_error(
    server: Any, model: GeminiModel
) -> None:
    server.sse("plain.sse", drop_after=1)
    with pytest.raises(ProviderError, match="dropped mid-stream after 1 events") as caught:
        await collect(model, ask())
    assert caught.value.retryable is True


async def test_an_error_event_mid_stream_is_a_retryable_http_error(
    server: Any, model: GeminiModel
) -> None:
    server.sse("overloaded_midstream.sse")
    with pytest.raises(ProviderHTTPError, match="overloaded") as caught:
        await collect(model, ask())
    assert (caught.value.status, caught.value.retryable) == (503, True)


async def test_a_stream_that_ends_without_a_finish_reason_is_incomplete(
    server: Any, model: GeminiModel
) -> None:
    first, _, _ = (e + b"\n\n" for e in recording("plain.sse").split(b"\n\n") if e.strip())
    server.events(first)
    with pytest.raises(ProviderResponseError, match="without a finish reason") as caught:
        await collect(model, ask())
    assert caught.value.retryable is True


async def test_a_blocked_prompt_is_a_clear_final_error(server: Any, model: GeminiModel) -> None:
    server.json("blocked_prompt.json")
    with pytest.raises(GeminiBlockedError) as caught:
        await model.request(ask())
    error = caught.value
    assert (error.reason, error.where, error.retryable) == ("SAFETY", "prompt", False)
    assert "HARM_CATEGORY_HARASSMENT rated HIGH" in str(error)


async def test_an_empty_answer_stopped_for_safety_is_a_clear_error(
    server: Any, model: GeminiModel
) -> None:
    server.json("safety_stop.json")
    with pytest.raises(GeminiBlockedError, match="HARM_CATEGORY_DANGEROUS_CONTENT rated HIGH"):
        await model.request(ask())


async def test_a_timeout_is_a_deadline_error_naming_the_wait(
    server: Any, model: GeminiModel
) -> None:
    server.json("plain.json", delay=1.0)
    with pytest.raises(ModelDeadlineExceeded, match=r"no answer within 0.2 s") as caught:
        await model.request(ask(settings={"timeout": 0.2}))
    assert caught.value.deadline == 0.2


async def test_the_total_deadline_ends_a_call_that_never_answers(
    server: Any, model: GeminiModel
) -> None:
    server.json("plain.json", delay=2.0)
    with pytest.raises(ModelDeadlineExceeded):
        await Invoker(model, deadline=0.3).chat(ask())


async def test_a_refused_connection_is_retryable(model: GeminiModel) -> None:
    closed = GeminiModel("gemini-2.5-flash", base_url="http://127.0.0.1:9", api_key="k")
    with pytest.raises(ProviderError, match="request failed") as caught:
        await closed.request(ask())
    assert caught.value.retryable is True


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("error_429.json", {"status": 429}),
        ("malformed.json", {"status": 500}),
        ("malformed.json", {}),
        ("wrong_types.json", {}),
        ("plain.json", {"drop": True}),
        ("blocked_prompt.json", {}),
        ("malformed.json", {"status": 302, "headers": {"Location": "http://127.0.0.1:9/"}}),
    ],
    ids=["429", "500-html", "not-json", "wrong-types", "cut-body", "blocked", "redirect"],
)
async def test_no_sdk_exception_type_leaks(
    server: Any, model: GeminiModel, name: str, options: dict[str, Any]
) -> None:
    for streamed in (False, True):
        server.json(name, **options)
        with pytest.raises(ProviderError) as caught:
            if streamed:
                await collect(model, ask())
            else:
                await model.request(ask())
        assert type(caught.value).__module__.startswith(("agentkit_core", "agentkit_model_gemini"))


# ---------------------------------------------------------------------- configuration


def test_a_missing_api_key_is_one_line_naming_the_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ConfigError) as caught:
        GeminiModel("gemini-2.5-flash")
    text = str(caught.value)
    assert "\n" not in text and "GEMINI_API_KEY" in text and "GOOGLE_API_KEY" in text


async def test_google_api_key_wins_over_gemini_api_key(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini")
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    server.json("plain.json")
    await GeminiModel("gemini-2.5-flash", base_url=server.url).request(ask())
    assert server.received[0].headers["x-goog-api-key"] == "from-google"


def test_the_model_string_resolves_through_the_plugin(monkeypatch: pytest.MonkeyPatch, pm) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    model = resolve_model("gemini:gemini-2.5-flash", manager=pm)
    assert isinstance(model, GeminiModel) and model.name == "gemini:gemini-2.5-flash"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": 0}, "timeout must be a positive"),
        ({"base_url": "localhost:8080"}, "not an http"),
        ({"cached_content": "abc"}, "cachedContents/"),
    ],
)
def test_bad_options_name_the_value(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GeminiModel("gemini-2.5-flash", api_key="k", **options)


async def test_explicit_cache_leaves_the_cached_instruction_and_tools_out(server: Any) -> None:
    model = GeminiModel(
        "gemini-2.5-flash", base_url=server.url, api_key="k", cached_content="cachedContents/c1"
    )
    server.json("thinking_answer.json")
    response = await model.request(ask(tools=(WEATHER,)))
    assert response.usage.cache_read_tokens == 2048
    body = server.received[0].json()
    assert body["cachedContent"] == "cachedContents/c1"
    assert not {"systemInstruction", "tools", "toolConfig"} & set(body)
    assert body["contents"] == QUESTION


async def test_reasoning_effort_and_extra_body(server: Any, model: GeminiModel) -> None:
    server.json("plain.json")
    server.json("plain.json")
    extra = {"generationConfig": {"candidateCount": 1}, "labels": {"team": "a"}}
    await model.request(ask(settings={"reasoning_effort": "low", "extra_body": extra}))
    await model.request(ask(settings={"reasoning_effort": "none"}))
    first, second = (r.json() for r in server.received)
    assert first["generationConfig"]["thinkingConfig"] == {
        "thinking_level": "LOW",
        "include_thoughts": True,
    }
    assert first["generationConfig"]["candidateCount"] == 1 and first["labels"] == {"team": "a"}
    assert second["generationConfig"]["thinkingConfig"] == {"thinking_budget": 0}


async def test_vertex_express_mode_and_project_paths(server: Any) -> None:
    from google.oauth2.credentials import Credentials

    express = GeminiModel("gemini-2.5-flash", vertexai=True, api_key="k", base_url=server.url)
    project = GeminiModel(
        "gemini-2.5-flash",
        vertexai=True,
        project="my-project",
        location="us-central1",
        credentials=Credentials(token="ya29.test"),
        base_url=server.url,
    )
    server.json("plain.json")
    server.json("plain.json")
    await express.request(ask())
    await project.request(ask())
    paths = [r.path for r in server.received]
    assert paths[0] == "/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent"
    assert paths[1] == (
        "/v1beta1/projects/my-project/locations/us-central1/publishers/google/models/"
        "gemini-2.5-flash:generateContent"
    )
    assert server.received[1].headers["authorization"] == "Bearer ya29.test"


def test_neither_the_plugin_nor_listing_plugins_imports_the_sdk() -> None:
    code = (
        "import sys, agentkit_model_gemini\n"
        "from agentkit_core import PluginManager\n"
        "PluginManager().plugins()\n"
        "assert 'google.genai' not in sys.modules, 'google.genai imported'\n"
        "assert 'agentkit_model_gemini._model' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_a_model_used_on_two_event_loops_gets_a_client_each(server: Any) -> None:
    model = GeminiModel("gemini-2.5-flash", base_url=server.url, api_key="k")
    server.json("plain.json")
    server.json("plain.json")
    await model.request(ask())

    def other_loop() -> str:
        return asyncio.run(model.request(ask())).message.text

    assert await asyncio.to_thread(other_loop) == "The capital of France is Paris."
