"""Issue 39's targets: ``run_stream_events`` against ``run``, and a delta's way to the caller.

Both runs are the agent of ``bench_agentkit.py`` with every installed plugin (``hooks=None``),
on the same script; ``run`` calls ``model.request``, the event stream ``model.stream``, so a
third row, ``run_stream`` (the model streamed, no events), separates the stream's own cost from
the events'. Rounds interleave the three in one process, each round in a new order. The ratios
are the median over rounds of each round's own ratio (paired: a host loaded by other work slows
the three of a round alike).

The headline (``events_vs_run``) is the whole run's cost a turn: each run's wall time less the
stub's own work and the tools', over its turns, so it holds everything the framework does for
the run, the consumer's building of the events included, wherever the loop gives it the time
(at the run's end without model waits; while the model answers with them). ``cpu`` is the same
in process CPU time (the stub's own CPU and the tools' time taken out). ``turn`` is the older,
narrower figure: model returned -> model called again, less the tools, a run's median over its
turns; it leaves out what the consumer does while the model answers or after the run.

``--model-waits``: the stub passes the loop once while it answers (``asyncio.sleep(0)``), as a
model on the network does. Whatever runs in that pass (the consumer taking the turn's events,
the loop waking it) is the framework's: only the stub's own work is taken out. The stub makes
its stream's events before it stamps its exit, as ``request`` makes its response.

The latency is the time from a model yielding a text delta (a ``perf_counter_ns`` stamp) to the
consumer holding its ``TextDelta``, over 2,000 deltas. Prints one JSON line.

``--count``: instead, the Python bytecodes a turn of one run in each mode (``sys.settrace``,
deterministic: load plays no part), their ratios, and where the events' extra over ``run``
goes, by function (``--top`` of them). C code (asyncio's tasks and futures, the frozen
events' slot stores) counts only as the bytecodes that call it. About ±15 a turn from run to
run: the hooks take a CPU reading when the wall clock says the last one is stale.
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
from common import bytecodes
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
        #: Over a run: the wall time the stub passed the loop, and its own CPU time (ns).
        self.passed = self.cpu = 0

    async def _answer(self, request: ModelRequest) -> tuple[ModelResponse, int]:
        """The script's next response, the entry stamped, and the CPU clock the stub started at

        (moved on by the time the loop had: that is the framework's); the exit is the caller's
        to stamp.
        """
        cpu = time.process_time_ns()
        response = await ScriptedModel.request(self, request)
        if self.waits:
            passed, cpu_passed = time.perf_counter_ns(), time.process_time_ns()
            await asyncio.sleep(0)  # a network read: the loop runs whoever else waits
            self.passed += time.perf_counter_ns() - passed
            cpu += time.process_time_ns() - cpu_passed
        return response, cpu

    async def request(self, request: ModelRequest) -> ModelResponse:
        response, cpu = await self._answer(request)
        self.cpu += time.process_time_ns() - cpu
        REC.model_done()
        return response

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async def events() -> AsyncIterator[StreamEvent]:
            response, cpu = await self._answer(request)
            message = response.message
            answer = [StreamEvent("text", text=message.text)] if message.text else []
            answer += [StreamEvent("tool_call", tool_call=call) for call in message.tool_calls]
            answer.append(StreamEvent("done", response=response))
            self.cpu += time.process_time_ns() - cpu
            REC.model_done()
            for event in answer:
                yield event

        return events()


async def overhead(agent: Agent, mode: str) -> tuple[float, float, float]:
    """One run of ``TURNS`` turns: its whole and CPU time a turn, its median turn overhead.

    In µs; the stub's own work and the tools' taken out.
    """
    REC.reset(TURNS)
    model: StampedStream = agent.model  # type: ignore[assignment]
    model.requests.clear()  # replay the script
    model.passed = model.cpu = 0
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
    stub = sum(o - i for i, o in zip(REC.model_in, REC.model_out, strict=True)) - model.passed
    tools = sum(REC.tool_ns)
    whole = (wall - stub - tools) / 1000 / (TURNS + 1)
    cpu = (cpu - model.cpu - tools) / 1000 / (TURNS + 1)
    return whole, cpu, statistics.median(REC.overheads_us())


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


def agent(waits: bool) -> Agent:
    return Agent(  # hooks left to the default: every installed plugin's
        "bench",
        StampedStream([step] * 1000, waits),
        "You are a benchmark.",
        tools("async"),
        max_turns=1000,
    )


def count(waits: bool, top: int) -> None:
    """Print the bytecodes a turn of each mode, and the events' extra over ``run`` by function."""
    built = agent(waits)
    modes = ("run", "run_stream", "run_stream_events")
    loop = asyncio.new_event_loop()  # one loop: a new one a run would count its making
    for mode in modes:  # warm-up: caches filled, names seen
        loop.run_until_complete(overhead(built, mode))
    counts = {mode: bytecodes(loop.run_until_complete, overhead(built, mode)) for mode in modes}
    loop.close()
    per_turn = {mode: sum(c.values()) / (TURNS + 1) for mode, c in counts.items()}
    extra = counts["run_stream_events"].copy()
    extra.subtract(counts["run"])
    print(
        json.dumps(
            {
                "model_waits": waits,
                "bytecodes_per_turn": {m: round(v) for m, v in per_turn.items()},
                "events_vs_run": round(per_turn["run_stream_events"] / per_turn["run"], 3),
                "run_stream_vs_run": round(per_turn["run_stream"] / per_turn["run"], 3),
                "events_extra_by_function": {
                    k: round(v / (TURNS + 1), 1)
                    for k, v in sorted(extra.items(), key=lambda kv: -abs(kv[1]))[:top]
                    if v
                },
            }
        )
    )


async def main(waits: bool) -> None:
    built = agent(waits)
    modes = ("run", "run_stream", "run_stream_events")
    figures: dict[str, dict[str, list[float]]] = {
        name: {mode: [] for mode in modes} for name in ("whole", "cpu", "turn")
    }
    for _ in range(3):  # warm-up
        for mode in modes:
            await overhead(built, mode)
    for r in range(ROUNDS):
        for mode in modes[r % 3 :] + modes[: r % 3]:  # each mode first in a third of the rounds
            for name, value in zip(figures, await overhead(built, mode), strict=True):
                figures[name][mode].append(value)
    whole, cpu, turn = figures["whole"], figures["cpu"], figures["turn"]
    lat = sorted(await latency_us())
    print(
        json.dumps(
            {
                "model_waits": waits,
                "events_vs_run": ratio(whole, "run_stream_events", "run"),
                "events_vs_run_stream": ratio(whole, "run_stream_events", "run_stream"),
                "run_stream_vs_run": ratio(whole, "run_stream", "run"),
                "whole_us_per_turn": {m: round(statistics.median(v), 2) for m, v in whole.items()},
                "cpu_events_vs_run": ratio(cpu, "run_stream_events", "run"),
                "cpu_us_per_turn": {m: round(statistics.median(v), 2) for m, v in cpu.items()},
                "turn_events_vs_run": ratio(turn, "run_stream_events", "run"),
                "turn_overhead_us": {m: round(statistics.median(v), 2) for m, v in turn.items()},
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
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-waits", action="store_true", help="the stub passes the loop")
    parser.add_argument("--count", action="store_true", help="bytecodes a turn, not time")
    parser.add_argument("--top", type=int, default=25, help="with --count: functions shown")
    args = parser.parse_args()
    if args.count:
        count(args.model_waits, args.top)
    else:
        asyncio.run(main(args.model_waits))
