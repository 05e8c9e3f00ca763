"""What OpenTelemetry receives of text a person or the model wrote: nothing once the run is
secret-tainted, attributes and error messages included, and never more than the size cap."""

from __future__ import annotations

import asyncio
import ipaddress
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentkit_tracing_otel import OTelExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentkit_core import Agent
from agentkit_core import GuardrailViolation
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core.plugin import Guardrail
from agentkit_core.plugin import SpanExporter
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import SpanExporterConformance

SECRET = "4711-hunter2"
WITHHELD = "(withheld: the run is secret-tainted)"


class NoPrivateHosts(Guardrail):
    """Refuses URLs whose host is a private address, naming the URL, as the web guardrail does."""

    def check_url(self, url: str) -> None:
        host = urlsplit(url).hostname or ""
        try:
            private = ipaddress.ip_address(host).is_private
        except ValueError:
            private = False
        if private:
            raise GuardrailViolation(f"{url} is private", value=url, reason=f"{host} is private")


async def ask_code(ctx: RunContext) -> str:
    """Ask the person for the one-time code."""
    return str(await ctx.elicit("One-time code?", secret=True))


def fetch(url: str) -> str:
    """Fetch a page."""
    return "the page"


async def person(question: str, schema: Any, secret: bool) -> str:
    return SECRET


def calls(*named: tuple[str, dict[str, Any]]) -> Message:
    return Message.assistant(
        "", [ToolCall(f"c{i}", n, json.dumps(a)) for i, (n, a) in enumerate(named)]
    )


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def traced(agent_of: Any) -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agent = agent_of(OTelExporter(provider, capture_content=True))
    try:
        asyncio.run(agent.run("go"))
    except Exception:
        pass  # a failed run's spans are what is looked at
    return list(memory.get_finished_spans())


def test_a_blocked_url_and_tool_names_after_a_secret_answer_are_withheld() -> None:
    script: list[Any] = [
        calls(("ask_code", {})),
        calls(("fetch", {"url": f"http://10.0.0.1/?pin={SECRET}"}), (f"nosuch_{SECRET}", {})),
        "done",
    ]
    spans = traced(
        lambda exporter: Agent(
            "a",
            ScriptedModel(script),
            tools=[ask_code, fetch],
            guardrail=NoPrivateHosts(),
            elicitor=person,
            exporters=[exporter],
        )
    )
    assert SECRET not in json.dumps([dict(s.attributes or {}) for s in spans])
    blocked = next(
        attributes(s)
        for s in spans
        if s.name == "execute_tool fetch" and "agentkit.egress_blocked" in (s.attributes or {})
    )
    assert blocked["agentkit.egress_blocked"] == WITHHELD
    assert blocked["gen_ai.tool.name"] == "fetch"  # the registered tool's name is safe
    names = [attributes(s)["agentkit.tool_call_names"] for s in spans if "chat" in s.name]
    assert list(names[0]) == ["ask_code"] and list(names[1]) == [WITHHELD, WITHHELD]


def test_a_tainted_spans_error_message_is_withheld_and_its_type_kept() -> None:
    def refuse(call: ToolCall) -> ToolDecision | None:
        if call.name == "fetch":
            raise ValueError(f"cannot judge {call.arguments}")
        return None

    script = [calls(("ask_code", {})), calls(("fetch", {"url": SECRET}))]
    spans = traced(
        lambda exporter: Agent(
            "a",
            ScriptedModel(script),
            tools=[ask_code, fetch],
            hooks=Hooks.of("judge", before_tool_call=refuse),
            elicitor=person,
            exporters=[exporter],
        )
    )
    failed = [s for s in spans if s.status.status_code is StatusCode.ERROR]
    assert failed and all(SECRET not in (s.status.description or "") for s in failed)
    assert any(WITHHELD in (s.status.description or "") for s in failed)
    assert all(attributes(s).get("error.type") for s in failed)


def test_attributes_are_capped_with_the_cut_marked() -> None:
    def deny(call: ToolCall) -> ToolDecision:
        return ToolDecision.deny("r" * 1_000_000)

    spans = traced(
        lambda exporter: Agent(
            "a",
            ScriptedModel([calls(("fetch", {"url": "x"})), "done"]),
            tools=[fetch],
            hooks=Hooks.of("gate", before_tool_call=deny),
            exporters=[exporter],
        )
    )
    verdict = next(attributes(s) for s in spans if s.name == "verdict")
    reason = verdict["agentkit.reason"]
    assert len(reason) <= 4096 and reason.endswith("…[cut 995,936 chars]")


class TestOTelExporterConformance(SpanExporterConformance):
    """The exporter with content capture on: what the suite holds every exporter to."""

    def make_exporter(self, tmp_path: Path) -> SpanExporter:
        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        exporter = OTelExporter(provider, capture_content=True)
        self.memory = memory
        return exporter

    def exported(self, exporter: SpanExporter) -> str:
        spans = self.memory.get_finished_spans()
        return json.dumps(
            [
                [
                    s.name,
                    dict(s.attributes or {}),
                    s.status.description,
                    [[e.name, dict(e.attributes or {})] for e in s.events],
                ]
                for s in spans
            ],
            default=repr,
            ensure_ascii=False,
        )
