"""Gemini sends each tool call whole: a run's events through ``run_stream_events`` show each
call started then ready at once, without argument deltas (the stream has no
``"tool_call_delta"``)."""

from __future__ import annotations

from typing import Any

from agentkit_model_gemini import GeminiModel

from agentkit_core import Agent
from agentkit_core import Hooks


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def get_time(zone: str) -> str:
    """The time in a zone."""
    return f"noon in {zone}"


async def test_a_run_streams_each_whole_call_started_then_ready(server: Any) -> None:
    server.sse("parallel_tools.sse")
    server.sse("plain.sse")
    model = GeminiModel("gemini-2.5-flash", base_url=server.url, api_key="test-key")
    agent = Agent("weather", model, "Be brief.", [get_weather, get_time], hooks=Hooks())
    kinds = {"tool_call_started", "tool_call_args_delta", "tool_call_ready"}
    events = [e async for e in agent.run_stream_events("Weather in Paris, time in Rome?")]
    assert events[-1].kind == "run_finished"
    told = [e for e in events if e.kind in kinds]
    assert [e.kind for e in told] == ["tool_call_started", "tool_call_ready"] * 2
    assert [e.name for e in told[::2]] == [e.call.name for e in told[1::2]]
    assert [e.call.name for e in told[1::2]] == ["get_weather", "get_time"]
    assert [e.call_id for e in told[::2]] == [e.call.id for e in told[1::2]]
