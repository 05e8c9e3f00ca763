"""Issue 39's targets: ``run_stream_events`` against ``run``, and a delta's way to the caller.

Both runs are the agent of ``bench_agentkit.py`` with every installed plugin (``hooks=None``),
on the same script; ``run`` calls ``model.request``, the event stream ``model.stream``, so a
third row, ``run_stream`` (the model streamed, no events), separates the stream's own cost from
the events'. Rounds interleave the three in one process, each round in a new order; the
per-turn overhead is the common measurement (model returned -> model called again, less the
tools), a run's median over its turns. The stub does the same work between its stamps under
either method: it makes its stream's events before it stamps its exit, as ``request`` makes
its response. The ratios are the median over rounds of each round's own ratio (paired: a host
loaded by other work slows the three of a round alike). ``whole`` is each run's wall time per
turn less the model stub and the tools, ``cpu`` its process CPU time per turn (the stub and
the tools included, alike in the three): both also hold what the consumer does with the
events, wherever the loop gives it the time.

``--model-waits``: the stub passes the loop once while it answers (``asyncio.sleep(0)``
between its stamps), as a model on the network does. The consumer then takes each turn's
events while the model answers, and the run pays for waking it once a turn (a
``Future.set_result``, which ``loop.call_soon``s the consumer's task); without it the run
never lets the consumer in, which gets every event at the run's end.

The latency is the time from a model yielding a text delta (a ``perf_counter_ns`` stamp) to the
consumer holding its ``TextDelta``, over 2,000 deltas. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import Step

TURNS, ROUNDS = 40, 60


class StampedStream(StampedScript):
    """The script streamed: the answer in one delta, each call as one event, then done.

    The events are made before the exit's stamp (what a model does to answer is the model's
    time under either method); ``waits``: the stub passes the loop once as it answers.
    """

    def __init__(self, steps: list[Step], waits: bool) -> None:
        super().__init__(steps, name="scripted")
        self.waits = waits

    async def _answer(self, request: ModelRequest) -> ModelResponse:
        """The script's next response, the entry stamped; the exit is the caller's to stamp."""
        response = await ScriptedModel.request(self, request)
        if self.waits:
            await asyncio.sleep(0)  # a network read: the loop runs whoever else waits
        return response

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = await self._answer(request)
        REC.model_done()
        return response

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async def events() -> AsyncIterator[StreamEvent]:
            response = await self._answer(request)
            message = response.message
            answer = [StreamEvent("text", text=message.text)] if message.text else []
            answer += [StreamEvent("tool_call", tool_call=call) for call in message.tool_calls]
            answer.append(StreamEvent("done", response=response))
            REC.model_done()
            for event in answer:
                yield event

        return events()


async def overhead(agent: Agent, mode: str) -> tuple[float, float, float]:
    """One run of ``TURNS`` turns: its median per-turn overhead, its whole and CPU time a turn.

    In µs.
    """
    REC.reset(TURNS)
    agent.model.requests.clear()  # type: ignore[attr-defined]  # replay the script
    cpu = time.process_time_ns()
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
    cpu = time.process_time_ns() - cpu
    stub = sum(o - i for i, o in zip(REC.model_in, REC.model_out, strict=True))
    whole = (wall - stub - sum(REC.tool_ns)) / 1000 / (TURNS + 1)
    return statistics.median(REC.overheads_us()), whole, cpu / 1000 / (TURNS + 1)


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
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-waits", action="store_true", help="the stub passes the loop")
    args = parser.parse_args()
    built = Agent(  # hooks left to the default: every installed plugin's
        "bench",
        StampedStream([step] * 1000, args.model_waits),
        "You are a benchmark.",
        tools("async"),
        max_turns=1000,
    )
    modes = ("run", "run_stream", "run_stream_events")
    figures: dict[str, dict[str, list[float]]] = {
        name: {mode: [] for mode in modes} for name in ("turn", "whole", "cpu")
    }
    for _ in range(3):  # warm-up
        for mode in modes:
            await overhead(built, mode)
    for r in range(ROUNDS):
        for mode in modes[r % 3 :] + modes[: r % 3]:  # each mode first in a third of the rounds
            for name, value in zip(figures, await overhead(built, mode), strict=True):
                figures[name][mode].append(value)
    turn, whole, cpu = figures["turn"], figures["whole"], figures["cpu"]
    lat = sorted(await latency_us())
    print(
        json.dumps(
            {
                "model_waits": args.model_waits,
                "turn_overhead_us": {m: round(statistics.median(v), 2) for m, v in turn.items()},
                "events_vs_run": ratio(turn, "run_stream_events", "run"),
                "events_vs_run_stream": ratio(turn, "run_stream_events", "run_stream"),
                "run_stream_vs_run": ratio(turn, "run_stream", "run"),
                "whole_us_per_turn": {m: round(statistics.median(v), 2) for m, v in whole.items()},
                "whole_events_vs_run": ratio(whole, "run_stream_events", "run"),
                "cpu_us_per_turn": {m: round(statistics.median(v), 2) for m, v in cpu.items()},
                "cpu_events_vs_run": ratio(cpu, "run_stream_events", "run"),
                "delta_to_caller_us": {
                    "median": round(statistics.median(lat), 2),
                    "p95": round(lat[int(len(lat) * 0.95)], 2),
                },
                "load": os.getloadavg(),
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
