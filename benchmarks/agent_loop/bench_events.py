"""Issue 39's targets: ``run_stream_events`` against ``run``, and a delta's way to the caller.

Both runs are the agent of ``bench_agentkit.py`` with every installed plugin (``hooks=None``),
on the same script; ``run`` calls ``model.request``, the event stream ``model.stream``, so a
third row, ``run_stream`` (the model streamed, no events), separates the stream's own cost from
the events'. Rounds interleave the three in one process, each round in a new order; the
per-turn overhead is the common measurement (model returned -> model called again, less the
tools), a run's median over its turns. The ratios are the median over rounds of each round's
own ratio (paired: a host loaded by other work slows the three of a round alike). ``whole`` is
each run's wall time per turn less the model stub and the tools: it also holds what the
consumer does with the events, wherever the loop gives it the time.

The latency is the time from a model yielding a text delta (a ``perf_counter_ns`` stamp) to the
consumer holding its ``TextDelta``, over 2,000 deltas. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator

from bench_agentkit import StampedScript
from bench_agentkit import step
from common import REC
from common import tools

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core.events import TextDelta
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent

TURNS, ROUNDS = 40, 60


class StampedStream(StampedScript):
    """The script streamed: the answer in one delta, each call as one event, then done."""

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async def events() -> AsyncIterator[StreamEvent]:
            response = await self.request(request)  # stamps entry and exit
            if response.message.text:
                yield StreamEvent("text", text=response.message.text)
            for call in response.message.tool_calls:
                yield StreamEvent("tool_call", tool_call=call)
            yield StreamEvent("done", response=response)

        return events()


async def overhead(agent: Agent, mode: str) -> tuple[float, float]:
    """One run of ``TURNS`` turns: its median per-turn overhead and its whole time a turn (µs)."""
    REC.reset(TURNS)
    agent.model.requests.clear()  # type: ignore[attr-defined]  # replay the script
    t0 = time.perf_counter_ns()
    if mode == "run":
        await agent.run("go")
    elif mode == "run_stream":
        async for _ in agent.run_stream("go"):
            pass
    else:
        async for _ in agent.run_stream_events("go"):
            pass
    wall = time.perf_counter_ns() - t0
    stub = sum(o - i for i, o in zip(REC.model_in, REC.model_out, strict=True))
    whole = (wall - stub - sum(REC.tool_ns)) / 1000 / (TURNS + 1)
    return statistics.median(REC.overheads_us()), whole


class Deltas:
    """A model answering in ``count`` deltas, each stamped as it is yielded."""

    name = "deltas"

    def __init__(self, count: int) -> None:
        self.count = count
        self.stamps: list[int] = []

    async def request(self, request: ModelRequest) -> None:
        raise NotImplementedError

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        for _ in range(self.count):
            await asyncio.sleep(0)  # a network read between deltas
            self.stamps.append(time.perf_counter_ns())
            yield StreamEvent("text", text="x")
        yield StreamEvent("done", response=ModelResponse(Message.assistant("x" * self.count)))


async def latency_us(count: int = 2000) -> list[float]:
    model = Deltas(count)
    agent = Agent("latency", model)  # type: ignore[arg-type]
    seen: list[int] = []
    async for event in agent.run_stream_events("go"):
        if isinstance(event, TextDelta):
            seen.append(time.perf_counter_ns())
    assert len(seen) == count, "a delta was merged: the consumer fell behind"
    return [(s - m) / 1000 for s, m in zip(seen, model.stamps, strict=True)]


async def main() -> None:
    built = Agent(  # hooks left to the default: every installed plugin's
        "bench",
        StampedStream([step] * 1000, name="scripted"),
        "You are a benchmark.",
        tools("async"),
        max_turns=1000,
    )
    modes = ("run", "run_stream", "run_stream_events")
    turn: dict[str, list[float]] = {mode: [] for mode in modes}
    whole: dict[str, list[float]] = {mode: [] for mode in modes}
    for _ in range(3):  # warm-up
        for mode in modes:
            await overhead(built, mode)
    for r in range(ROUNDS):
        for mode in modes[r % 3 :] + modes[: r % 3]:  # each mode first in a third of the rounds
            per_turn, per_run = await overhead(built, mode)
            turn[mode].append(per_turn)
            whole[mode].append(per_run)
    lat = sorted(await latency_us())
    print(
        json.dumps(
            {
                "turn_overhead_us": {m: round(statistics.median(v), 2) for m, v in turn.items()},
                "events_vs_run": ratio(turn, "run_stream_events", "run"),
                "events_vs_run_stream": ratio(turn, "run_stream_events", "run_stream"),
                "run_stream_vs_run": ratio(turn, "run_stream", "run"),
                "whole_us_per_turn": {m: round(statistics.median(v), 2) for m, v in whole.items()},
                "whole_events_vs_run": ratio(whole, "run_stream_events", "run"),
                "delta_to_caller_us": {
                    "median": round(statistics.median(lat), 2),
                    "p95": round(lat[int(len(lat) * 0.95)], 2),
                },
            }
        )
    )


def ratio(figures: dict[str, list[float]], mode: str, base: str) -> dict[str, float]:
    """The median, and the quartiles, of ``mode``'s figure over ``base``'s, round by round."""
    q1, med, q3 = statistics.quantiles(
        [a / b for a, b in zip(figures[mode], figures[base], strict=True)], n=4
    )
    return {"median": round(med, 3), "q1": round(q1, 3), "q3": round(q3, 3)}


if __name__ == "__main__":
    asyncio.run(main())
