"""Checks every model plugin runs on how it streams tool calls.

A provider's wire tells a call in fragments (or whole); these helpers read what the model makes of
it — its ``"tool_call_delta"`` events, and a run's ``tool_call_started`` / argument deltas /
``tool_call_ready`` — so each plugin's tests only serve its own recorded streams.
"""

from __future__ import annotations

from itertools import pairwise

from .._agent import Agent
from .._events import ToolCallArgsDelta
from .._events import ToolCallReady
from .._events import ToolCallStarted
from .._hooks import Hooks
from .._models import Model
from .._models import ModelRequest
from .._models import StreamEvent


def split_at(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at ``cuts`` (each taken modulo its length + 1): fragments that join to it."""
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


async def streamed_tool_calls(
    model: Model, request: ModelRequest
) -> list[tuple[str, str, str, str]]:
    """(kind, id, name, arguments) of each tool-call event of one stream, which must finish."""
    events: list[StreamEvent] = [event async for event in model.stream(request)]
    assert events[-1].kind == "done"
    return [
        (e.kind, e.tool_call.id, e.tool_call.name, e.tool_call.arguments)
        for e in events
        if e.tool_call is not None
    ]


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return f"sunny in {city}"


def get_time(zone: str) -> str:
    """The time in a time zone.

    Args:
        zone: the zone's name
    """
    return f"noon in {zone}"


ToolCallEvent = ToolCallStarted | ToolCallArgsDelta | ToolCallReady


async def run_tool_calls(model: Model, *, deltas: bool = True) -> dict[str, list[ToolCallEvent]]:
    """One run asking for the weather in Paris and the time in Rome: each call's events, by id.

    The model's wire must answer with calls of ``get_weather`` and/or ``get_time``, then a plain
    answer. Each call must be told started, then its argument deltas joining to the arguments
    it is ready with (none when ``deltas`` is false: a wire that sends calls whole), then ready.
    """
    agent = Agent("weather", model, "Be brief.", [get_weather, get_time], hooks=Hooks())
    events = [e async for e in agent.run_stream_events("Weather in Paris, time in Rome?")]
    assert events[-1].kind == "run_finished"
    by_call: dict[str, list[ToolCallEvent]] = {}
    for event in events:
        if isinstance(event, ToolCallReady):
            by_call.setdefault(event.call.id, []).append(event)
        elif isinstance(event, (ToolCallStarted, ToolCallArgsDelta)):
            by_call.setdefault(event.call_id, []).append(event)
    for call_events in by_call.values():
        started, *told, ready = call_events
        assert isinstance(started, ToolCallStarted) and isinstance(ready, ToolCallReady)
        assert started.name == ready.call.name
        assert all(a.seq < b.seq for a, b in pairwise(call_events))
        args = [e for e in told if isinstance(e, ToolCallArgsDelta)]
        assert args == told and bool(told) == deltas  # none for a wire that sends calls whole
        if deltas:
            assert "".join(e.delta for e in args) == ready.call.arguments
    return by_call
