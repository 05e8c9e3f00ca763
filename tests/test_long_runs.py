"""Long runs: what a run keeps grows with its turns, not with their square.

Each turn's model request carries the whole transcript so far; a per-turn structure that kept
it (the ``model_call`` span's payload did) makes a run's memory quadratic in its turns.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import AsyncIterator

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent


def echo(text: str) -> str:
    """Return the text."""
    return text


class OneCallPerTurn:
    """Calls ``echo`` once a turn for ``turns`` turns, then answers; keeps no request.

    (ScriptedModel keeps every request it is sent, which is itself quadratic.)
    """

    name = "one-call-per-turn"

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.calls = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls > self.turns:
            return ModelResponse(Message.assistant("done"), Usage(100, 10), "stop", self.name)
        call = ToolCall(f"c{self.calls}", "echo", '{"text": "hello"}')
        return ModelResponse(Message.assistant("", (call,)), Usage(100, 10), "tool_calls", "m")

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError


def _peak_kib(turns: int) -> float:
    """Peak traced memory of one run of ``turns`` tool turns (every span kept, as by default)."""
    agent = Agent(
        "a", OneCallPerTurn(turns), "sys", [echo], max_turns=turns + 1, hooks=Hooks(), exporters=[]
    )
    gc.collect()
    tracemalloc.start()
    try:
        result = asyncio.run(agent.run("go"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.output == "done"
    return peak / 1024


def test_a_runs_peak_memory_grows_linearly_with_its_turns() -> None:
    """From 200 to 400 turns a run adds about what it added from 100 to 200, times two.

    Linear memory makes the ratio 2; the quadratic payload made it 4.
    """
    _peak_kib(20)  # warm-up: imports, caches, schemas
    small, middle, large = (_peak_kib(n) for n in (100, 200, 400))
    ratio = (large - middle) / (middle - small)
    assert ratio < 2.6, (small, middle, large, ratio)
