"""Core's own exporter, the trace file (``agentkit run --trace``), passes the span-exporter
conformance suite; an exporter that records the raw attributes fails it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit_core.cli import TraceFile
from agentkit_core.plugin import Span
from agentkit_core.plugin import SpanExporter
from agentkit_core.testing import SpanExporterConformance


class TestTraceFileConformance(SpanExporterConformance):
    def make_exporter(self, tmp_path: Path) -> SpanExporter:
        return TraceFile(tmp_path / "trace.jsonl")

    def exported(self, exporter: SpanExporter) -> str:
        assert isinstance(exporter, TraceFile)
        return exporter.path.read_text(encoding="utf-8")

    def close_exporter(self, exporter: SpanExporter) -> None:
        assert isinstance(exporter, TraceFile)
        exporter.close()


class Raw(SpanExporter):
    """Records what a span holds (payload, attributes, error), not what it may export."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def on_end(self, span: Span) -> None:
        error = None if span.error is None else repr(span.error)
        held = [span.name, span.payload, span.attributes, error]
        self.lines.append(json.dumps(held, default=repr))


class RawExporter(SpanExporterConformance):
    def make_exporter(self, tmp_path: Path) -> SpanExporter:
        return Raw()

    def exported(self, exporter: SpanExporter) -> str:
        assert isinstance(exporter, Raw)
        return "\n".join(exporter.lines)


@pytest.mark.parametrize(
    ("test", "message"),
    [
        ("test_a_secret_tainted_run_exports_nothing_it_wrote", "secret-tainted"),
        ("test_no_error_past_the_cap_is_exported", "exported whole"),
    ],
)
async def test_an_exporter_of_the_raw_attributes_fails_the_suite(
    test: str, message: str, tmp_path: Path
) -> None:
    with pytest.raises(AssertionError, match=message):
        await getattr(RawExporter(), test)(Raw())


async def test_an_exporter_that_records_nothing_fails_the_suite() -> None:
    class Silent(RawExporter):
        def make_exporter(self, tmp_path: Path) -> SpanExporter:
            return SpanExporter()

        def exported(self, exporter: SpanExporter) -> str:
            return ""

    for test in (
        Silent().test_a_run_answers_as_without_it_and_its_tool_calls_are_recorded,
        Silent().test_a_failed_runs_error_is_recorded,
    ):
        with pytest.raises(AssertionError, match="not in what was exported"):
            await test(SpanExporter())
