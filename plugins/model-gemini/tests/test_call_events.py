"""Gemini sends each tool call whole: a run's events through ``run_stream_events`` show each
call started then ready at once, without argument deltas (the stream has no
``"tool_call_delta"``)."""

from __future__ import annotations

from typing import Any

from agentkit_model_gemini import GeminiModel

from agentkit_core.testing import run_tool_calls


async def test_a_run_streams_each_whole_call_started_then_ready(server: Any) -> None:
    server.sse("parallel_tools.sse")
    server.sse("plain.sse")
    model = GeminiModel("gemini-2.5-flash", base_url=server.url, api_key="test-key")
    calls = await run_tool_calls(model, deltas=False)
    assert [events[-1].call.name for events in calls.values()] == ["get_weather", "get_time"]
    first, second = calls.values()
    assert first[-1].seq < second[0].seq  # told whole: one is ready before the next starts
