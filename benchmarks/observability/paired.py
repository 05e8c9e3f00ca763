"""Tracing against its floor, in one process and paired, in CPU time (``time.process_time``).

Each round runs, in a new order, a 40-turn run of the agent-loop scenario (core only) with no
exporter, with tracing-otel on a no-op exporter under a sampler that drops every run
(``ParentBased(TraceIdRatioBased(0))``: what an untraced run pays), and with tracing-otel
recording, and with ``sdk_floor.FloorExporter`` (the SDK's own calls for the same spans at the
same points of the run, nothing else: the floor in the run's setting); then the SDK's own spans
for the same run in a tight loop (``sdk_floor.run``). The differences are taken within the
round; medians and ranges over the rounds. One JSON line.

    python benchmarks/observability/paired.py [--rounds 30] [--turns 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))

from agentkit_tracing_otel import OTelExporter
from bench_agentkit import make
from common import REC
from noop import noop_provider
from opentelemetry.sdk.trace.sampling import ParentBased
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from sdk_floor import FloorExporter
from sdk_floor import run as sdk_run


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


async def measure(rounds: int, turns: int) -> dict[str, Any]:
    cases = {
        "none": make("async", exporters=[]),
        "sampled_out": make(
            "async", exporters=[OTelExporter(noop_provider(ParentBased(TraceIdRatioBased(0.0))))]
        ),
        "otel": make("async", exporters=[OTelExporter(noop_provider())]),
        "floor_in_run": make(
            "async", exporters=[FloorExporter(noop_provider().get_tracer("floor"))]
        ),
    }
    tracer = noop_provider().get_tracer("floor")
    for run in cases.values():  # warm-up
        for _ in range(3):
            REC.reset(turns)
            await run(turns)
    for _ in range(3):
        sdk_run(tracer, turns)
    cpu: dict[str, list[float]] = {name: [] for name in [*cases, "sdk"]}
    order = list(cases)
    rng = random.Random(36)
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            REC.reset(turns)
            t0 = time.process_time()
            await cases[name](turns)
            cpu[name].append((time.process_time() - t0) / turns * 1e6)
        t0 = time.process_time()
        sdk_run(tracer, turns)
        cpu["sdk"].append((time.process_time() - t0) / turns * 1e6)
    none = cpu["none"]
    sampled = [a - b for a, b in zip(cpu["sampled_out"], none, strict=True)]
    traced = [a - b for a, b in zip(cpu["otel"], none, strict=True)]
    floor = [a - b for a, b in zip(cpu["floor_in_run"], none, strict=True)]
    return {
        "rounds": rounds,
        "turns": turns,
        "us_per_turn": {name: spread(values) for name, values in cpu.items()},
        "sampled_out_extra_us": spread(sampled),
        "otel_extra_us": spread(traced),
        "otel_extra_over_sdk": spread([t / f for t, f in zip(traced, cpu["sdk"], strict=True)]),
        "floor_in_run_extra_us": spread(floor),
        "otel_extra_over_floor_in_run": spread([t / f for t, f in zip(traced, floor, strict=True)]),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    figures = asyncio.run(measure(args.rounds, args.turns))
    print(json.dumps({**figures, "load": [load, os.getloadavg()[0]]}))


if __name__ == "__main__":
    main()
