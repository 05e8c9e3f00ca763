"""The OpenTelemetry SDK's own cost for the spans of one agentkit turn, with nothing of agentkit:
a turn, a model call and a tool call started under their parents and ended with the attributes
the plugin sets, on the same batch processor and no-op exporter. Prints one JSON line."""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from noop import noop_provider
from opentelemetry.trace import SpanKind
from opentelemetry.trace import set_span_in_context

MODEL = {
    "gen_ai.request.model": "scripted",
    "gen_ai.response.model": "scripted",
    "gen_ai.usage.input_tokens": 120,
    "gen_ai.usage.output_tokens": 12,
    "gen_ai.response.finish_reasons": ["tool_calls"],
    "agentkit.messages": 3,
    "agentkit.tool_call_ids": ["call_1"],
    "agentkit.tool_call_names": ["add"],
}
TOOL = {
    "gen_ai.tool.name": "add",
    "gen_ai.tool.call.id": "call_1",
    "agentkit.is_error": False,
    "agentkit.result_chars": 1,
}


def turns(tracer: Any, context: Any, n: int) -> None:
    """``n`` turns' spans: a turn, and a model call and a tool call under it, as the plugin sets."""
    for _ in range(n):
        turn = tracer.start_span("turn", context=context, start_time=time.time_ns())
        inner = set_span_in_context(turn)
        chat = tracer.start_span(
            "chat",
            context=inner,
            kind=SpanKind.CLIENT,
            start_time=time.time_ns(),
            attributes={"gen_ai.operation.name": "chat"},
        )
        chat.set_attributes(MODEL)
        chat.end(end_time=time.time_ns())
        tool = tracer.start_span(
            "execute_tool add",
            context=inner,
            start_time=time.time_ns(),
            attributes={"gen_ai.operation.name": "execute_tool"},
        )
        tool.set_attributes(TOOL)
        tool.end(end_time=time.time_ns())
        turn.set_attributes({"agentkit.turn": 1})
        turn.end(end_time=time.time_ns())


def main() -> None:
    tracer = noop_provider().get_tracer("floor")
    context = set_span_in_context(tracer.start_span("invoke_agent bench"))
    rounds = []
    for _ in range(7):
        n = 2000
        t0 = time.perf_counter()
        turns(tracer, context, n)
        rounds.append((time.perf_counter() - t0) / n * 1e6)
    print(json.dumps({"sdk_us_per_turn": statistics.median(rounds)}))


if __name__ == "__main__":
    main()
