"""Python bytecodes a turn the exporters run, on a stub tracer: deterministic, load plays no part.

A 40-turn run of the agent-loop scenario (core only) with no exporter, with tracing-otel and
with ``sdk_floor.FloorExporter``, both on a tracer whose spans do nothing (so only the
exporter's own Python and core's work for it count, not the SDK's), or with ``--sdk`` on the
SDK's tracer on the no-op exporter (the SDK's Python in the run's thread counted too: the
ratio of the two over no exporter is ``paired.py``'s in bytecodes), each counted with
``sys.settrace`` opcode events. Prints each exporter's bytecodes a turn over no exporter (and
no exporter's own), then tracing-otel's extra by function: over no exporter, or with
``--over floor`` over ``FloorExporter`` (what the plugin and core's work for it add to the
SDK's own calls, a negative count being the floor's own code).

    python benchmarks/observability/bytecodes.py [--top 20] [--sdk] [--over floor]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))

from agentkit_tracing_otel import OTelExporter
from bench_agentkit import make
from common import REC
from common import bytecodes
from noop import noop_provider
from sdk_floor import FloorExporter

from agentkit_core import _tracing

TURNS = 40


class StubSpan:
    name = ""

    def is_recording(self) -> bool:
        return True

    def set_attributes(self, attributes: Any) -> None:
        pass

    def set_status(self, status: Any) -> None:
        pass

    def update_name(self, name: str) -> None:
        self.name = name

    def end(self, end_time: int | None = None) -> None:
        pass


class StubTracer:
    def start_span(self, name: str, **options: Any) -> StubSpan:
        span = StubSpan()
        span.name = name
        return span


class StubProvider:
    def get_tracer(self, *args: Any) -> StubTracer:
        return StubTracer()


def count(run: Any) -> collections.Counter[str]:
    """Bytecodes run by each function (file:name) in one run of :data:`TURNS` turns."""
    REC.reset(TURNS)
    _tracing._ids.clear()  # every run draws one batch of span ids, not one in some runs
    return bytecodes(asyncio.run, run(TURNS))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--sdk", action="store_true", help="the SDK's tracer, not a stub")
    parser.add_argument("--over", choices=["none", "floor"], default="none")
    args = parser.parse_args()
    provider = noop_provider() if args.sdk else StubProvider()
    cases = {
        "none": make("async", exporters=[]),
        "otel": make("async", exporters=[OTelExporter(provider)]),
        "floor": make("async", exporters=[FloorExporter(provider.get_tracer("floor"))]),
    }
    for run in cases.values():  # warm-up: caches filled, names seen
        REC.reset(TURNS)
        asyncio.run(run(TURNS))
    counts = {name: count(run) for name, run in cases.items()}
    per_turn = {name: sum(c.values()) / TURNS for name, c in counts.items()}
    extra = counts["otel"].copy()
    extra.subtract(counts[args.over])
    top = sorted(extra.items(), key=lambda item: -abs(item[1]))[: args.top]
    print(
        json.dumps(
            {
                "none": round(per_turn["none"]),
                "over_none": {k: round(v - per_turn["none"]) for k, v in per_turn.items()},
                "otel_extra_by_function": {k: round(v / TURNS, 1) for k, v in top if v},
            }
        )
    )


if __name__ == "__main__":
    main()
