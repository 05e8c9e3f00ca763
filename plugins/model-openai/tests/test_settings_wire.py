"""ModelSettings on the Chat Completions wire: asserted on the body the local server received."""

from __future__ import annotations

from typing import Any

import pytest
from agentkit_model_openai import IGNORED_SETTINGS
from agentkit_model_openai import OpenAIModel
from agentkit_model_openai import settings_to_openai
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ToolSpec

WEATHER = ToolSpec("get_weather", "The weather.", {"type": "object", "properties": {}})

EVERY: ModelSettings = {
    "temperature": 0.3,
    "top_p": 0.9,
    "top_k": 40,
    "max_tokens": 256,
    "stop": ["END"],
    "seed": 11,
    "presence_penalty": 0.5,
    "frequency_penalty": -0.5,
    "tool_choice": "get_weather",
    "parallel_tool_calls": False,
    "reasoning_effort": "low",
    "timeout": 5.0,
    "extra_body": {"service_tier": "flex", "temperature": 0.4},
}


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return "sunny"


async def test_every_field_on_the_wire(server: Any) -> None:
    server.json("plain.json")
    model = OpenAIModel("gpt-4o-mini", base_url=server.url, api_key="sk-test")
    await model.request(ModelRequest((Message.user("hi"),), (WEATHER,), settings=EVERY))
    body = server.received[0].json()
    sent = {k: v for k, v in body.items() if k not in ("model", "messages", "tools")}
    assert sent == {
        "temperature": 0.4,  # extra_body goes last, over the mapped fields
        "top_p": 0.9,
        "max_completion_tokens": 256,
        "stop": ["END"],
        "seed": 11,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "parallel_tool_calls": False,
        "reasoning_effort": "low",
        "service_tier": "flex",
    }
    assert "top_k" not in body and "timeout" not in body  # ignored; the client's own


async def test_settings_from_kit_and_run_reach_the_server_merged(server: Any) -> None:
    """Kit(settings=) is the config's; a run's settings go over them; both paths stream too."""
    server.json("plain.json")
    server.sse("plain.sse")
    model = OpenAIModel("m", base_url=server.url, api_key="sk-test", max_tokens_field="max_tokens")
    kit = Kit(model=model, tools=[get_weather], settings={"temperature": 0.1, "max_tokens": 64})
    agent = Agent.from_config(kit.config(), hooks=Hooks())
    await agent.run("hi", settings={"tool_choice": "required", "extra_body": {"top_k": 5}})
    [event async for event in agent.run_stream("hi", settings={"temperature": 0.7})]
    first, second = (r.json() for r in server.received)
    assert (first["temperature"], first["max_tokens"], first["tool_choice"]) == (
        0.1,
        64,
        "required",
    )
    assert first["top_k"] == 5 and "max_completion_tokens" not in first
    assert (second["temperature"], second["max_tokens"], second["stream"]) == (0.7, 64, True)
    assert "tool_choice" not in second and "top_k" not in second


async def test_tool_settings_are_left_out_without_tools(server: Any) -> None:
    server.json("plain.json")
    model = OpenAIModel("m", base_url=server.url, api_key="sk-test")
    settings: ModelSettings = {"tool_choice": "auto", "parallel_tool_calls": True, "seed": 1}
    await model.request(ModelRequest((Message.user("hi"),), settings=settings))
    body = server.received[0].json()
    assert body["seed"] == 1
    assert "tool_choice" not in body and "parallel_tool_calls" not in body


async def test_a_key_no_setting_has_is_refused_before_sending(server: Any) -> None:
    """A hook that puts a provider field straight into settings is told where it goes."""
    model = OpenAIModel("m", base_url=server.url, api_key="sk-test")
    request = ModelRequest((Message.user("hi"),), settings={"logprobs": True})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(ConfigError, match=r"'logprobs', which is not a ModelSettings key.*"):
        await model.request(request)
    assert server.received == []


def test_max_tokens_field_is_one_of_two() -> None:
    with pytest.raises(ConfigError, match="max_tokens_field must be 'max_completion_tokens' or"):
        OpenAIModel("m", base_url="http://127.0.0.1:1/v1", max_tokens_field="max_output_tokens")


SAME = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty")
settings_strategy = st.fixed_dictionaries(
    {},
    optional={
        **{key: st.floats(0, 1) for key in SAME},
        "top_k": st.integers(1, 100),
        "max_tokens": st.integers(1, 10_000),
        "stop": st.lists(st.text(min_size=1, max_size=4), max_size=3),
        "tool_choice": st.sampled_from(["auto", "none", "required"])
        | st.text(min_size=1, max_size=8),
        "parallel_tool_calls": st.booleans(),
        "reasoning_effort": st.sampled_from(["none", "low", "high"]),
        "timeout": st.floats(0.1, 60),
        "extra_body": st.dictionaries(st.sampled_from(["x", "y", "seed"]), st.integers()),
    },
)


@given(settings_strategy, st.booleans())
def test_every_setting_lands_once_or_is_declared_ignored(settings: Any, tools: bool) -> None:
    body = settings_to_openai(settings, tools=tools)
    extra = settings.get("extra_body", {})
    for key, value in settings.items():
        if key in IGNORED_SETTINGS or key in ("timeout", "extra_body"):
            assert key not in body or key in extra
            continue
        if key in ("tool_choice", "parallel_tool_calls") and not tools:
            assert key not in body or key in extra
            continue
        wire = {"max_tokens": "max_completion_tokens"}.get(key, key)
        if wire in extra:
            assert body[wire] == extra[wire]
        elif key == "tool_choice" and value not in ("auto", "none", "required"):
            assert body[wire] == {"type": "function", "function": {"name": value}}
        else:
            assert body[wire] == value
    for key, value in extra.items():
        assert body[key] == value
