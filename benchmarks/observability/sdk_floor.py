"""The OpenTelemetry SDK's own cost for the spans of one agentkit run, with nothing of agentkit.

The same spans tracing-otel makes for the agent-loop scenario (checked against it by
``python sdk_floor.py --check``): an ``invoke_agent bench`` run; under it, per turn, a ``turn N``
and under that a ``chat scripted`` model call (CLIENT) and an ``execute_tool <name>`` tool call;
the last turn only answers. Same names, kinds, parent links, attribute names and value kinds,
start and end times given, on the same batch processor and no-op exporter. A span with nothing
under it (a model or tool call) is made whole at its end, one ``start_span`` with its name and
every attribute, as tracing-otel makes it; a run and a turn, which their children need, start
at their start (a turn with its number), the run's other attributes at its end with one
``set_attributes``. The cheapest way to make those spans with the SDK: its floor. Prints one
JSON line.

:func:`run` makes them in a tight loop; :class:`FloorExporter` makes the same SDK calls at the
points of a real run where agentkit's spans start and end (names and attributes constant,
parents found by id): the SDK's cost in the run's own setting, where its code shares the
processor's caches with the agent's and costs about 1.6 times the tight loop's.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

from noop import noop_provider
from opentelemetry.trace import SpanKind
from opentelemetry.trace import set_span_in_context

from agentkit_core.plugin import Span
from agentkit_core.plugin import SpanExporter

CONVERSATION = "0123456789abcdef0123456789abcdef"
TOOLS = ("add", "echo", "upper")
CHAT_START = {"gen_ai.operation.name": "chat"}
TOOL_START = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function"}
RUN_START = {"gen_ai.operation.name": "invoke_agent"}
TOOL_END = {
    "gen_ai.tool.name": "add",
    "gen_ai.tool.call.id": "call_1",
    "agentkit.is_error": False,
    "agentkit.result_chars": 5,
}


def chat_end(messages: int, call: str | None, tool: str | None) -> dict[str, Any]:
    return {
        "agentkit.messages": messages,
        "gen_ai.request.model": "scripted",
        "gen_ai.response.model": "scripted",
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.usage.output_tokens": 10,
        "gen_ai.response.finish_reasons": ["tool_calls" if call else "stop"],
        "agentkit.tool_call_ids": [call] if call else [],
        "agentkit.tool_call_names": [tool] if tool else [],
        "gen_ai.conversation.id": CONVERSATION,
    }


def run(tracer: Any, n: int) -> None:
    """One run of ``n`` tool-calling turns and a last answering one, as tracing-otel makes it."""
    now = time.time_ns
    root = tracer.start_span("invoke_agent bench", start_time=now(), attributes=RUN_START)
    under_root = set_span_in_context(root)
    for i in range(1, n + 2):
        turn = tracer.start_span(
            f"turn {i}", context=under_root, start_time=now(), attributes={"agentkit.turn": i}
        )
        inner = set_span_in_context(turn)
        start = now()
        call, tool = (f"call_{i}", TOOLS[i % 3]) if i <= n else (None, None)
        chat = tracer.start_span(
            "chat scripted",
            context=inner,
            kind=SpanKind.CLIENT,
            start_time=start,
            attributes={**CHAT_START, **chat_end(2 * i, call, tool)},
        )
        chat.end(end_time=now())
        if tool is not None:
            start = now()
            span = tracer.start_span(
                f"execute_tool {tool}",
                context=inner,
                start_time=start,
                attributes={
                    **TOOL_START,
                    **TOOL_END,
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.id": call,
                },
            )
            span.end(end_time=now())
        turn.end(end_time=now())
    root.set_attributes(run_end(n))
    root.end(end_time=now())


def run_end(n: int) -> dict[str, Any]:
    return {
        "gen_ai.agent.name": "bench",
        "agentkit.model": "scripted",
        "agentkit.status": "done",
        "gen_ai.usage.input_tokens": 100 * (n + 1),
        "gen_ai.usage.output_tokens": 10 * (n + 1),
        "agentkit.requests": n + 1,
        "agentkit.pending": [],
        "gen_ai.conversation.id": CONVERSATION,
    }


#: Per agentkit span name: the OpenTelemetry name, kind, start and end attributes (constants).
FLOOR: dict[str, tuple[str, Any, Any, Any]] = {
    "run": ("invoke_agent bench", SpanKind.INTERNAL, RUN_START, run_end(40)),
    "model_call": ("chat scripted", SpanKind.CLIENT, CHAT_START, chat_end(4, "call_1", "add")),
    "tool_call": ("execute_tool add", SpanKind.INTERNAL, TOOL_START, TOOL_END),
}


#: The spans with nothing under them, made whole at their end: name, kind, every attribute.
LEAVES: dict[str, tuple[str, Any, Any]] = {
    name: (title, kind, {**start, **end})
    for name, (title, kind, start, end) in FLOOR.items()
    if name != "run"
}


class FloorExporter(SpanExporter):
    """The SDK's calls for a run's spans, where the run makes them, and nothing else.

    Not an exporter anyone should use: every span gets the constants of the benchmark's
    spans. What it costs over a run without it is the SDK's floor in the run's setting.
    """

    def __init__(self, tracer: Any) -> None:
        self.tracer = tracer
        self.live: dict[str, Any] = {}
        self.contexts: dict[str | None, Any] = {}

    def on_start(self, span: Span) -> None:
        if span.name in LEAVES:  # started whole at its end
            return
        floor = FLOOR.get(span.name)
        if floor is None:  # a turn: its number in its name and its one attribute
            turn = span.attributes["turn"]
            floor = (f"turn {turn}", SpanKind.INTERNAL, {"agentkit.turn": turn}, None)
        name, kind, start, _ = floor
        otel = self.tracer.start_span(
            name,
            context=self.contexts.get(span.parent_id),
            kind=kind,
            start_time=span.start_ns,
            attributes=start,
        )
        self.live[span.span_id] = otel
        self.contexts[span.span_id] = set_span_in_context(otel)  # a run or a turn: a parent

    def on_end(self, span: Span) -> None:
        leaf = LEAVES.get(span.name)
        if leaf is not None:
            name, kind, attributes = leaf
            otel = self.tracer.start_span(
                name,
                context=self.contexts.get(span.parent_id),
                kind=kind,
                start_time=span.start_ns,
                attributes=attributes,
            )
        else:
            otel = self.live.pop(span.span_id)
            self.contexts.pop(span.span_id, None)
            floor = FLOOR.get(span.name)
            if floor is not None:
                otel.set_attributes(floor[3])
        otel.end(end_time=span.end_ns)


def shape(spans: Any) -> list[tuple[Any, ...]]:
    """Each span's name (digits and tool names masked), kind, parent's name, attribute kinds."""
    by_id = {s.context.span_id: s for s in spans}

    def masked(name: str) -> str:
        head = name.partition(" ")[0]
        return head if head in ("turn", "execute_tool") else name

    out = []
    for s in spans:
        parent = by_id.get(s.parent.span_id) if s.parent else None
        kinds = sorted((k, type(v).__name__) for k, v in s.attributes.items())
        out.append((masked(s.name), s.kind.name, parent and masked(parent.name), kinds))
    return sorted(out, key=repr)


def check() -> None:
    """Compare the floors' spans with tracing-otel's on the agent-loop scenario (3 turns)."""
    import asyncio
    from pathlib import Path

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))
    from agentkit_tracing_otel import OTelExporter
    from bench_agentkit import make
    from common import REC

    shapes = []
    for maker in ("agentkit", "floor", "floor in the run"):
        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        if maker == "floor":
            run(provider.get_tracer("floor"), 3)
        else:
            REC.reset(3)
            exporter = (
                OTelExporter(provider)
                if maker == "agentkit"
                else FloorExporter(provider.get_tracer("floor"))
            )
            asyncio.run(make("async", exporters=[exporter])(3))
        shapes.append(shape(memory.get_finished_spans()))
    same = shapes[0] == shapes[1] == shapes[2]
    print(json.dumps({"same_spans": same, "agentkit": shapes[0], "floor": shapes[1]}))
    sys.exit(0 if same else 1)


def main() -> None:
    if sys.argv[1:] == ["--check"]:
        check()
    tracer = noop_provider().get_tracer("floor")
    rounds = []
    for _ in range(7):
        n = 400
        t0 = time.perf_counter()
        for _ in range(10):
            run(tracer, n // 10)
        rounds.append((time.perf_counter() - t0) / n * 1e6)
    print(json.dumps({"sdk_us_per_turn": statistics.median(rounds)}))


if __name__ == "__main__":
    main()
