"""AnthropicModel: the real SDK client against a real HTTP server on 127.0.0.1 that plays
recorded Messages API answers; every assertion on what was sent reads the received body."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentkit_model_anthropic import AnthropicModel

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ModelDeadlineExceeded
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

#: What the provider's errors read their wait from (core's one reader of the headers).
retry_after = ProviderHTTPError.retry_after_of

WEATHER = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ToolSpec(
    "get_time",
    "The time in a time zone.",
    {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
)
CITY = OutputSchema(
    "city_info",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"],
        "additionalProperties": False,
    },
)
MODEL = "claude-sonnet-4-5"


def recording(name: str) -> bytes:
    return (Path(__file__).parent / "recordings" / name).read_bytes()


def ask(text: str = "What is the capital of France?", **kwargs: Any) -> ModelRequest:
    return ModelRequest((Message.system("Be brief."), Message.user(text)), **kwargs)


def sent_key(headers: dict[str, str]) -> str:
    """The API key a request carried (``x-api-key``, or a bearer token in newer SDKs)."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


async def collect(model: AnthropicModel, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in model.stream(request)]


def make(server: Any, **options: Any) -> AnthropicModel:
    return AnthropicModel(MODEL, base_url=server.url, api_key="sk-ant-test", **options)


@pytest.fixture
def model(server: Any) -> AnthropicModel:
    return make(server)


# ---------------------------------------------------------------------- plain answers


async def test_plain_answer_and_the_body_sent(server: Any, model: AnthropicModel) -> None:
    server.json("plain.json")
    response = await model.request(ask(settings={"temperature": 0.2, "stop": ["\n\n"]}))
    assert response.message == Message.assistant("The capital of France is Paris.")
    assert response.usage == Usage(21, 9, 1)
    assert response.finish_reason == "stop"
    assert response.model == "claude-sonnet-4-5-20250929"
    [received] = server.received
    assert (received.method, received.path) == ("POST", "/v1/messages")
    assert sent_key(received.headers) == "sk-ant-test"
    assert "anthropic-version" in received.headers
    assert received.headers.get("x-stainless-retry-count", "0") == "0"
    assert received.json() == {
        "model": MODEL,
        "max_tokens": 4096,  # DEFAULT_MAX_TOKENS: the API requires one
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "What is the capital of France?",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            }
        ],
        "temperature": 0.2,
        "stop_sequences": ["\n\n"],
    }


async def test_max_tokens_comes_from_the_settings_then_the_model(server: Any) -> None:
    server.json("plain.json")
    server.json("plain.json")
    await make(server, max_tokens=1000).request(ask())
    await make(server, max_tokens=1000).request(ask(settings={"max_tokens": 77}))
    assert [r.json()["max_tokens"] for r in server.received] == [1000, 77]


async def test_streamed_plain_answer(server: Any, model: AnthropicModel) -> None:
    server.sse("plain.sse")
    events = await collect(model, ask())
    assert [e.text for e in events if e.kind == "text"] == [
        "The capital",
        " of France",
        " is Paris.",
    ]
    done = events[-1]
    assert done.kind == "done" and done.response is not None
    assert done.response.message == Message.assistant("The capital of France is Paris.")
    assert done.response.usage == Usage(21, 9, 1)
    assert done.response.finish_reason == "stop"
    assert server.received[0].json()["stream"] is True


# ---------------------------------------------------------------------- tools


async def test_parallel_tool_calls(server: Any, model: AnthropicModel) -> None:
    server.json("parallel_tools.json")
    question = Message.user("Weather in Paris and time in Rome")
    response = await model.request(ModelRequest((question,), tools=(WEATHER, TIME)))
    assert response.message == Message.assistant(
        "I'll look both up.",
        [
            ToolCall("toolu_01Weather", "get_weather", '{"city": "Paris"}'),
            ToolCall("toolu_02Time", "get_time", '{"zone": "Europe/Rome"}'),
        ],
    )
    assert response.finish_reason == "tool_calls"
    tools = server.received[0].json()["tools"]
    assert tools[0] == {
        "name": "get_weather",
        "description": "The weather in a city.",
        "input_schema": WEATHER.parameters,
    }
    # no system message: the tools are the stable prefix, so the last tool is marked
    assert tools[1]["cache_control"] == {"type": "ephemeral"}


async def test_streamed_tool_arguments_are_parsed_as_they_arrive(
    server: Any, model: AnthropicModel
) -> None:
    server.json("parallel_tools.json")
    server.sse("parallel_tools.sse")
    whole = await model.request(ask(tools=(WEATHER, TIME)))
    events = await collect(model, ask(tools=(WEATHER, TIME)))
    calls = [e.tool_call for e in events if e.kind == "tool_call"]
    assert calls == list(whole.message.tool_calls)
    assert events[-1].response is not None
    assert events[-1].response.message == whole.message


async def test_streamed_tool_arguments_that_are_not_json_fail_at_the_bad_delta(
    server: Any, model: AnthropicModel
) -> None:
    events = recording("parallel_tools.sse").split(b"\n\n")
    broken = [e.replace(b'\\"Par', b"Par") for e in events if e.strip()]
    server.events(*(e + b"\n\n" for e in broken))
    with pytest.raises(
        ProviderResponseError,
        match=r"stream event 9 \(content_block_delta\) is malformed \(invalid JSON",
    ):
        await collect(model, ask(tools=(WEATHER, TIME)))


async def test_tool_settings(server: Any, model: AnthropicModel) -> None:
    for _ in range(3):
        server.json("parallel_tools.json")
    tools = (WEATHER, TIME)
    await model.request(ask(tools=tools, settings={"tool_choice": "required"}))
    await model.request(ask(tools=tools, settings={"parallel_tool_calls": False}))
    await model.request(ask(tools=tools, settings={"tool_choice": "get_time"}))
    choices = [r.json()["tool_choice"] for r in server.received]
    assert choices == [
        {"type": "any"},
        {"type": "auto", "disable_parallel_tool_use": True},
        {"type": "tool", "name": "get_time"},
    ]


# ---------------------------------------------------------------------- thinking


async def test_thinking_round_trip_sends_the_signed_blocks_back_in_place(server: Any) -> None:
    """A tool run over three requests, thinking interleaved between the tool calls: each later
    request carries every earlier answer's thinking exactly as received, in place."""
    model = make(server, thinking=2048)
    server.json("thinking_tools.json")
    server.json("interleaved_tools.json")
    server.json("thinking_answer.json")
    cities: list[str] = []

    def get_weather(city: str) -> str:
        """The weather in a city."""
        cities.append(city)
        return f"18 °C and sunny in {city}"

    agent = Agent("weather", model, "Be brief.", tools=[get_weather], hooks=Hooks())
    result = await agent.run("Weather in Paris and Rome?")
    assert result.output == "It is 18 °C and sunny in Paris."
    assert cities == ["Paris", "Rome"]
    first, second, third = (r.json() for r in server.received)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}

    def unmarked(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]

    turn1 = json.loads(recording("thinking_tools.json"))["content"]
    turn2 = json.loads(recording("interleaved_tools.json"))["content"]
    assert [m["role"] for m in third["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert second["messages"][1]["content"][:2] == turn1[:2]  # signed blocks byte for byte
    assert unmarked(second["messages"][1]["content"]) == turn1
    assert third["messages"][1]["content"] == turn1  # no longer at a breakpoint
    assert unmarked(third["messages"][3]["content"]) == turn2
    results = [m["content"][0] for m in third["messages"][2::2]]
    assert [(r["type"], r["tool_use_id"]) for r in results] == [
        ("tool_result", "toolu_03Weather"),
        ("tool_result", "toolu_05Weather"),
    ]
    # the answer's own thinking rides on its message, for the next turn and for checkpoints
    answer = result.transcript[-1]
    assert answer.metadata[REASONING]["model"] == model.name
    assert answer.metadata[REASONING]["blocks"][0]["signature"].startswith("EuYBCkQY")


async def test_thinking_survives_a_checkpoint_and_goes_back_only_to_its_model(
    server: Any,
) -> None:
    model = make(server, thinking=2048)
    server.json("thinking_tools.json")
    answer = (await model.request(ask(tools=(WEATHER,)))).message
    assert answer.metadata[REASONING]["at"] == [0, 1]
    restored = decode_state(encode_state({"m": [answer]}))["m"][0]
    assert restored.metadata == answer.metadata
    transcript = (
        Message.user("Weather in Paris?"),
        restored,
        Message.tool("toolu_03Weather", "18 °C"),
    )
    server.json("thinking_answer.json")
    server.json("thinking_answer.json")
    await model.request(ModelRequest(transcript))
    other = AnthropicModel("claude-opus-4-1", base_url=server.url, api_key="k", thinking=2048)
    await other.request(ModelRequest(transcript))
    mine, theirs = (r.json()["messages"][1]["content"] for r in server.received[1:])
    assert [b["type"] for b in mine] == ["thinking", "redacted_thinking", "tool_use"]
    assert [b["type"] for b in theirs] == ["tool_use"]


async def test_streamed_thinking_equals_the_whole_answer(server: Any) -> None:
    model = make(server, thinking=2048)
    server.json("thinking_tools.json")
    server.sse("thinking_tools.sse")
    whole = await model.request(ask(tools=(WEATHER,)))
    events = await collect(model, ask(tools=(WEATHER,)))
    streamed = events[-1].response
    assert streamed is not None
    assert streamed.message == whole.message
    assert streamed.message.metadata[REASONING] == whole.message.metadata[REASONING]
    assert not [e for e in events if e.kind == "text"]  # thinking is not answer text
    assert streamed.usage == whole.usage == Usage(2095, 503, 1, 0, 1800, 402)
    # the thinking streams as reasoning deltas; its signature and the redacted block do not
    blocks = streamed.message.metadata[REASONING]["blocks"]
    reasoning = [e.text for e in events if e.kind == "reasoning"]
    assert reasoning == ["The user wants the weather in Paris.", " I should call get_weather."]
    assert "".join(reasoning) == "".join(b.get("thinking", "") for b in blocks)
    shown = "".join(e.text for e in events)
    assert blocks[0]["signature"] not in shown and blocks[1]["data"] not in shown


async def test_streamed_thinking_then_text(server: Any) -> None:
    """Thinking deltas come as reasoning events before the answer; the text deltas are as before."""
    model = make(server, thinking=2048)
    server.json("thinking_answer.json")
    server.sse("thinking_answer.sse")
    whole = await model.request(ask("And the weather now?"))
    events = await collect(model, ask("And the weather now?"))
    assert [(e.kind, e.text) for e in events[:-1]] == [
        ("reasoning", "The tool says"),
        ("reasoning", " 18 degrees"),
        ("reasoning", " and sunny."),
        ("text", "It is 18 \u00b0C"),
        ("text", " and sunny in Paris."),
    ]
    streamed = events[-1].response
    assert streamed is not None and streamed.message == whole.message
    thinking = [b["thinking"] for b in streamed.message.metadata[REASONING]["blocks"]]
    assert "".join(e.text for e in events if e.kind == "reasoning") == "".join(thinking)
    assert streamed.message.text == "It is 18 \u00b0C and sunny in Paris."


async def test_thinking_budget_must_be_below_max_tokens(server: Any) -> None:
    model = make(server, thinking=4096, max_tokens=4096)
    with pytest.raises(ConfigError, match="thinking=4096 must be less than max_tokens=4096"):
        await model.request(ask())
    assert not server.received


# ---------------------------------------------------------------------- caching and usage


async def test_cache_usage_counts_every_prompt_token(server: Any, model: AnthropicModel) -> None:
    server.json("thinking_answer.json")
    usage = (await model.request(ask())).usage
    # input_tokens = 120 uncached + 310 written to the cache + 1800 read from it
    assert usage == Usage(
        2230, 60, 1, cache_read_tokens=1800, cache_write_tokens=310, reasoning_tokens=31
    )


async def test_breakpoints_at_the_prefix_the_previous_turn_and_the_end(
    server: Any, model: AnthropicModel
) -> None:
    server.json("plain.json")
    transcript = (
        Message.system("You are terse."),
        Message.system("Relevant context:\n[handbook] Octopuses have nine brains."),
        Message.user("How many brains?"),
        Message.assistant("", [ToolCall("toolu_1", "get_weather", '{"city": "Oslo"}')]),
        Message.tool("toolu_1", "cold"),
        Message.assistant("Nine."),
        Message.user("And hearts?"),
    )
    await model.request(ModelRequest(transcript, tools=(WEATHER,)))
    body = server.received[0].json()
    marked = [
        where
        for where, blocks in [("tools", body["tools"]), ("system", body["system"])]
        + [(f"messages[{i}]", m["content"]) for i, m in enumerate(body["messages"])]
        for block in (blocks if isinstance(blocks, list) else [])
        if "cache_control" in block
    ]
    # the end of the system prefix, the end of the previous turn (the tool result), the end
    assert marked == ["system", "messages[2]", "messages[4]"]
    assert body["system"][0] == {"type": "text", "text": "You are terse."}


async def test_caching_can_be_turned_off_and_given_a_ttl(server: Any) -> None:
    server.json("plain.json")
    server.json("plain.json")
    await make(server, cache=False).request(ask())
    await make(server, cache_ttl="1h").request(ask())
    off, hour = (r.json() for r in server.received)
    assert "cache_control" not in json.dumps(off)
    assert hour["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


async def test_a_callers_own_breakpoints_count_against_the_limit(
    server: Any, model: AnthropicModel
) -> None:
    server.json("plain.json")
    own = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    parts = tuple(dict(own, text=str(i)) for i in range(3))
    await model.request(ModelRequest((Message.system("S"), Message.user(parts))))
    body = server.received[0].json()
    assert json.dumps(body).count("cache_control") == 4  # three of the caller's, one of ours
    assert "cache_control" in body["system"][0]


# ---------------------------------------------------------------------- structured output


async def test_structured_output_native(server: Any, model: AnthropicModel) -> None:
    server.json("structured.json")
    response = await model.request(ask(output=CITY))
    assert json.loads(response.message.text) == {"city": "Paris", "population": 2102650}
    body = server.received[0].json()
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": CITY.schema}}
    assert "tools" not in body


async def test_structured_output_by_forced_tool_use(server: Any) -> None:
    model = make(server, structured_output="tool")
    server.json("structured_tool.json")
    server.sse("structured_tool.sse")
    response = await model.request(ask(output=CITY))
    assert response.message.tool_calls == ()
    assert json.loads(response.message.text) == {"city": "Paris", "population": 2102650}
    body = server.received[0].json()
    assert body["tool_choice"] == {"type": "tool", "name": "city_info"}
    assert body["tools"][0]["name"] == "city_info" and "output_config" not in body
    events = await collect(model, ask(output=CITY))
    text = "".join(e.text for e in events if e.kind == "text")
    assert json.loads(text) == json.loads(response.message.text)
    assert events[-1].response is not None and events[-1].response.message.text == text


async def test_structured_output_off_sends_no_schema(server: Any) -> None:
    model = make(server, structured_output="off")
    assert model.supports_structured_output is False
    server.json("plain.json")
    await model.request(ask(output=CITY))
    assert "output_config" not in server.received[0].json()


# ---------------------------------------------------------------------- stop reasons


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause_turn"),
    ],
)
async def test_stop_reasons(
    server: Any, model: AnthropicModel, stop_reason: str, finish: str
) -> None:
    body = json.loads(recording("plain.json"))
    server.answer(dict(body, stop_reason=stop_reason))
    assert (await model.request(ask())).finish_reason == finish


# ---------------------------------------------------------------------- errors


async def test_429_with_retry_after(server: Any, model: AnthropicModel) -> None:
    server.json("error_429.json", status=429, headers={"Retry-After": "7"})
    with pytest.raises(ProviderHTTPError) as caught:
        await model.request(ask())
    error = caught.value
    assert (error.status, error.retryable, error.retry_after) == (429, True, 7.0)
    assert "exceed the rate limit" in error.provider_message
    assert len(server.received) == 1  # the SDK's own retries are off


@pytest.mark.parametrize(("status", "name"), [(500, "error_500.json"), (529, "error_529.json")])
async def test_server_errors_and_overloaded_are_retryable(
    server: Any, model: AnthropicModel, status: int, name: str
) -> None:
    server.json(name, status=status)
    with pytest.raises(ProviderHTTPError) as caught:
        await model.request(ask())
    assert (caught.value.status, caught.value.retryable) == (status, True)
    assert len(server.received) == 1


async def test_bad_request_is_final_and_names_the_problem(
    server: Any, model: AnthropicModel
) -> None:
    server.json("error_400.json", status=400)
    with pytest.raises(ProviderHTTPError, match="HTTP 400: temperature: range") as caught:
        await model.request(ask())
    assert caught.value.retryable is False


async def test_overloaded_error_event_mid_stream(server: Any, model: AnthropicModel) -> None:
    server.sse("overloaded_mid_stream.sse")
    with pytest.raises(ProviderHTTPError, match="HTTP 529 mid-stream") as caught:
        await collect(model, ask())
    assert caught.value.retryable is True


async def test_malformed_body(server: Any, model: AnthropicModel) -> None:
    server.json("malformed.json")
    with pytest.raises(ProviderResponseError, match="malformed"):
        await model.request(ask())


async def test_stream_cut_mid_event(server: Any, model: AnthropicModel) -> None:
    events = [e + b"\n\n" for e in recording("plain.sse").split(b"\n\n") if e.strip()]
    half = events[5][: len(events[5]) // 2]
    server.raw(chunks=[*events[:5], half], drop=True)
    with pytest.raises(ProviderError, match="incomplete") as caught:
        await collect(model, ask())
    assert caught.value.retryable is True


async def test_stream_that_ends_without_message_stop(server: Any, model: AnthropicModel) -> None:
    events = [e + b"\n\n" for e in recording("plain.sse").split(b"\n\n") if e.strip()]
    server.events(*events[:-1])
    with pytest.raises(ProviderResponseError, match="without message_stop") as caught:
        await collect(model, ask())
    assert caught.value.retryable is True


async def test_timeout_is_a_deadline_error(server: Any) -> None:
    model = make(server, timeout=0.2)
    server.raw(body=recording("plain.json"), delay=1.0)
    with pytest.raises(ModelDeadlineExceeded, match=r"no answer within 0\.2 s"):
        await model.request(ask())


async def test_refused_connection_is_retryable(model: AnthropicModel) -> None:
    dead = AnthropicModel(MODEL, base_url="http://127.0.0.1:9", api_key="k")
    with pytest.raises(ProviderError) as caught:
        await dead.request(ask())
    assert caught.value.retryable is True and type(caught.value) is ProviderError


async def test_no_sdk_exception_type_leaks(server: Any, model: AnthropicModel) -> None:
    failures = [
        (400, recording("error_400.json")),
        (401, recording("error_401.json")),
        (529, recording("error_529.json")),
        (200, recording("malformed.json")),
        (200, b"[1, 2]"),
        (200, b'{"type": "message", "content": [{"type": "tool_use", "id": 3}]}'),
    ]
    for status, body in failures:
        server.raw(status, body)
        with pytest.raises(ProviderError) as caught:
            await model.request(ask())
        kinds = [type(e) for e in (caught.value, caught.value.__context__) if e is not None]
        assert type(caught.value).__module__.startswith("agentkit_core"), kinds


async def test_missing_api_key_is_one_line_naming_the_variable(server: Any) -> None:
    model = AnthropicModel(MODEL, base_url=server.url)
    with pytest.raises(ConfigError) as caught:
        await model.request(ask())
    assert str(caught.value) == (
        f"anthropic:{MODEL}: no API key: set ANTHROPIC_API_KEY (or pass api_key=)"
    )


async def test_key_and_base_url_from_the_environment(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.json("plain.json")
    await AnthropicModel(MODEL).request(ask())
    assert sent_key(server.received[0].headers) == "sk-from-env"


def test_bad_options_are_named() -> None:
    with pytest.raises(ConfigError, match=r"AnthropicModel\(thinking=\) must be a budget"):
        AnthropicModel(MODEL, thinking=10)
    with pytest.raises(ConfigError, match="not an http"):
        AnthropicModel(MODEL, base_url="api.anthropic.com")
    with pytest.raises(ConfigError, match="'native', 'tool' or 'off'"):
        AnthropicModel(MODEL, structured_output="json")  # type: ignore[arg-type]


async def test_a_bad_timeout_setting_is_named(server: Any, model: AnthropicModel) -> None:
    with pytest.raises(ConfigError, match=r"settings\['timeout'\] must be a positive number"):
        await model.request(ask(settings={"timeout": -1}))
    assert not server.received


def test_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after({}) is None


def test_the_model_string_and_no_sdk_at_import() -> None:
    code = (
        "import sys, agentkit_model_anthropic\n"
        "from agentkit_core import PluginManager\n"
        "from agentkit_core.plugin import resolve_model\n"
        "assert 'anthropic' not in sys.modules\n"
        "m = resolve_model('anthropic:claude-haiku-4-5', manager=PluginManager())\n"
        "assert 'anthropic' not in sys.modules, 'the SDK is imported before a request'\n"
        "print(m.name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "anthropic:claude-haiku-4-5"
