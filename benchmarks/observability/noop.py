"""An OpenTelemetry SDK tracer provider whose exporter drops every span: what is timed is the
instrumentation and the SDK, never a network."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult


class NoopExporter(SpanExporter):
    def __init__(self) -> None:
        self.exported = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.exported += len(spans)
        return SpanExportResult.SUCCESS


def noop_provider(sampler: Any = None) -> Any:
    """A provider with the batch processor a real deployment uses, on the no-op exporter.

    ``sampler``: the provider's (None: the SDK's default, every trace recorded).
    """
    provider = TracerProvider(sampler=sampler)
    provider.add_span_processor(BatchSpanProcessor(NoopExporter()))
    return provider
