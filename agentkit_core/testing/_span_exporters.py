"""The span-exporter conformance suite: what every registered span exporter must do.

Subclass it in a test module with a name starting ``Test``; give it ``make_exporter`` and
``exported``, everything the exporter has recorded so far as text the suite searches (its
file's contents, or the spans an in-memory backend holds, dumped as JSON), and
``close_exporter`` when it holds a file or a connection::

    class TestMyExporter(SpanExporterConformance):
        def make_exporter(self, tmp_path: Path) -> SpanExporter:
            return MyExporter(tmp_path / "spans.jsonl")

        def exported(self, exporter: SpanExporter) -> str:
            return exporter.path.read_text()

        def close_exporter(self, exporter: SpanExporter) -> None:
            exporter.close()

Each test runs a scripted agent with the exporter attached, and holds the exporter to this:
the run answers as it does without it; the run's tool calls and a failed run's error are
recorded; once the run is secret-tainted nothing a person or the model wrote is (payloads
left out, :meth:`Span.exported_attributes` and :meth:`Span.exported_error` recorded rather
than the raw ones); and no error or attribute is recorded past the export cap.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .._agent import Agent
from .._context import RunContext
from .._errors import ProviderError
from .._messages import Message
from .._span_export import ATTRIBUTE_LIMIT
from .._tracing import SpanExporter
from .._tracing import check_exporters
from ._models import ScriptedModel
from ._models import tool_call

#: What the person answers when asked for a secret: it must appear in no export.
SECRET = "conformance-secret-4711"
#: An error message past the export cap, as long as it is.
LONG = "AB" * ATTRIBUTE_LIMIT


def lookup_weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


async def ask_code(ctx: RunContext) -> str:
    """Ask the person for the one-time code."""
    return str(await ctx.elicit("One-time code?", secret=True))


async def _person(question: str, schema: object, secret: bool) -> str:
    return SECRET


def check_code(code: str) -> str:
    """Check a one-time code."""
    raise ValueError(f"the code {code} has expired")


def _calls(*named: tuple[str, dict[str, object]]) -> Message:
    # ids of their own, not tool_call's ``call_<name>``: call ids are exported as they are, and
    # one named after the secret would put it there
    calls = [tool_call(name, json.dumps(args), f"c{i}") for i, (name, args) in enumerate(named)]
    return Message.assistant("", calls)


class SpanExporterConformance:
    """Contract tests for a ``agentkit_core.plugin.SpanExporter``; subclass, define the two."""

    def make_exporter(self, tmp_path: Path) -> SpanExporter:
        raise NotImplementedError("define make_exporter(tmp_path) in the conformance subclass")

    def exported(self, exporter: SpanExporter) -> str:
        """Everything ``exporter`` recorded so far, as text (flush a batching one first)."""
        raise NotImplementedError("define exported(exporter) in the conformance subclass")

    def close_exporter(self, exporter: SpanExporter) -> None:
        """Release what ``exporter`` holds, after each test (default: nothing)."""

    @pytest.fixture
    def exporter(self, tmp_path: Path) -> Iterator[SpanExporter]:
        made = self.make_exporter(tmp_path)
        try:
            yield made
        finally:
            self.close_exporter(made)

    def test_is_a_span_exporter(self, exporter: SpanExporter) -> None:
        assert isinstance(exporter, SpanExporter)
        assert check_exporters([exporter]) == [exporter]

    async def test_a_run_answers_as_without_it_and_its_tool_calls_are_recorded(
        self, exporter: SpanExporter
    ) -> None:
        def agent(exporters: list[SpanExporter]) -> Agent:
            script: list[Message | str] = [
                _calls(("lookup_weather", {"city": "Oslo"})),
                "it is sunny in Oslo",
            ]
            model = ScriptedModel(script)
            return Agent("forecaster", model, tools=[lookup_weather], exporters=exporters)

        plain = await agent([]).run("go")
        assert (await agent([exporter]).run("go")).output == plain.output
        assert "lookup_weather" in self.exported(exporter), (
            "the run's tool call is not in what was exported"
        )

    async def test_a_failed_runs_error_is_recorded(self, exporter: SpanExporter) -> None:
        model = ScriptedModel([ProviderError("conformance-meltdown-2718")])
        with pytest.raises(ProviderError):
            await Agent("a", model, exporters=[exporter]).run("go")
        assert "conformance-meltdown-2718" in self.exported(exporter), (
            "a failed run's error message is not in what was exported"
        )

    async def test_a_secret_tainted_run_exports_nothing_it_wrote(
        self, exporter: SpanExporter
    ) -> None:
        """The answer to a secret question taints the run: none of its text is sent after.

        After it the model passes the secret to a tool, calls a tool named after it, and a tool
        fails with it in its message: it is in payloads, attributes and an error.
        """
        script: list[Message | str] = [
            _calls(("ask_code", {})),
            _calls(
                ("lookup_weather", {"city": SECRET}),
                (f"nosuch_{SECRET}", {}),
                ("check_code", {"code": SECRET}),
            ),
            f"your code is {SECRET}",
        ]
        tools = [ask_code, lookup_weather, check_code]
        model = ScriptedModel(script)
        agent = Agent("a", model, tools=tools, elicitor=_person, exporters=[exporter])
        assert SECRET in str((await agent.run("go")).output)
        text = self.exported(exporter)
        assert "ask_code" in text, "the run's tool call is not in what was exported"
        assert SECRET not in text, (
            "a secret-tainted run's text was exported: leave out the payload of a span whose "
            "tainted is True, and record exported_attributes() and exported_error()"
        )

    async def test_no_error_past_the_cap_is_exported(self, exporter: SpanExporter) -> None:
        """A provider's error as long as it likes: what is exported of it is cut."""
        model = ScriptedModel([ProviderError(f"conformance-meltdown {LONG}")])
        with pytest.raises(ProviderError):
            await Agent("a", model, exporters=[exporter]).run("go")
        text = self.exported(exporter)
        assert "conformance-meltdown" in text, "a failed run's error is not in what was exported"
        assert LONG[: ATTRIBUTE_LIMIT + 1] not in text, (
            f"an error longer than {ATTRIBUTE_LIMIT} characters was exported whole: record "
            "Span.exported_error() and Span.exported_attributes(), which cap each"
        )
