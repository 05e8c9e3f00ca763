"""Span attributes after a secret answer, and their size: what the trace file, the run viewer
and OpenTelemetry record of text a person or the model wrote (issue 33, "secrets in span
attributes"). Real runs: the web guardrail refusing a private URL, hooks quoting the model's
words, a trace file, ``agentkit view`` and the OpenTelemetry SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import json
import string
from pathlib import Path
from typing import Any

import agentkit_guardrail_web
import pytest
from agentkit_tracing_otel import OTelExporter
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core._span_export import ATTRIBUTE_LIMIT
from agentkit_core._span_export import SAFE_ATTRIBUTES
from agentkit_core._span_export import WITHHELD
from agentkit_core._span_export import _export_copy
from agentkit_core._span_export import export_attributes
from agentkit_core.cli import TraceFile
from agentkit_core.cli import read_trace_file
from agentkit_core.cli._viewer import render_html
from agentkit_core.cli._viewer import views_from_spans
from agentkit_core.plugin import Guardrail
from agentkit_core.plugin import current_span
from agentkit_core.plugin import get_guardrail
from agentkit_core.testing import ScriptedModel
from tests.conftest import run_cli

SECRET = "4711-hunter2"


def web() -> Guardrail:
    return get_guardrail(
        "web", manager=PluginManager(entry_points=False, plugins=[agentkit_guardrail_web])
    )


GUARDRAIL = web()


async def ask_code(ctx: RunContext) -> str:
    """Ask the person for the one-time code."""
    return str(await ctx.elicit("One-time code?", secret=True))


def fetch(url: str) -> str:
    """Fetch a page."""
    return "the page"


def echo(text: str) -> str:
    """Echo the text."""
    return text


TOOLS = [ask_code, fetch, echo]
KNOWN = {"ask_code", "fetch", "echo"}


def calls(turn: int, *named: tuple[str, dict[str, Any]]) -> Message:
    return Message.assistant(
        "", [ToolCall(f"t{turn}c{i}", n, json.dumps(a)) for i, (n, a) in enumerate(named)]
    )


def person(answer: str) -> Any:
    async def answers(question: str, schema: Any, secret: bool) -> str:
        return answer

    return answers


def gate(call: ToolCall) -> ToolDecision | None:
    """A hook whose reasons quote the model's words, as a policy explaining itself does."""
    if call.name not in KNOWN:
        return ToolDecision.deny(f"there is no tool {call.name}")
    if call.name == "echo" and "held" in call.arguments:
        return ToolDecision.ask(f"a person checks {call.arguments}")
    if call.name == "echo" and "crash" in call.arguments:
        raise ValueError(f"cannot judge {call.arguments}")
    return None


def note(call: ToolCall) -> None:
    """A plugin's own attribute quoting the model's words (text: no rule declares it safe)."""
    current_span().set("last_arguments", call.arguments)


HOOKS = Hooks.of("gate", before_tool_call=gate, after_tool_call=note)


def agent(script: list[Any], answer: str, exporters: list[Any]) -> Agent:
    return Agent(
        "a",
        ScriptedModel(script),
        tools=TOOLS,
        hooks=HOOKS,
        guardrail=GUARDRAIL,
        elicitor=person(answer),
        exporters=exporters,
        max_turns=len(script) + 1,
    )


def test_a_blocked_url_and_tool_names_after_a_secret_answer_are_withheld(tmp_path: Path) -> None:
    """``egress_blocked`` and ``tool_call_names`` carried the secret to the file and the page."""
    script = [
        calls(1, ("fetch", {"url": "http://10.0.0.2/?pin=none"})),
        calls(2, ("ask_code", {})),
        calls(3, ("fetch", {"url": f"http://10.0.0.1/?pin={SECRET}"}), (f"nosuch_{SECRET}", {})),
        "done",
    ]
    trace = tmp_path / "run.jsonl"
    with TraceFile(trace) as exporter:
        result = asyncio.run(agent(script, SECRET, [exporter]).run("go"))
    assert result.status == "done"
    assert SECRET not in trace.read_text()
    spans = read_trace_file(trace)
    blocked = [s for s in spans if s["name"] == "tool_call" and "egress_blocked" in s["attributes"]]
    # before the answer the refused URL is recorded as it was; after it, withheld
    assert blocked[0]["attributes"]["egress_blocked"] == "http://10.0.0.2/?pin=none"
    assert not blocked[0]["tainted"]
    assert blocked[1]["tainted"] and blocked[1]["attributes"]["egress_blocked"] == WITHHELD
    assert blocked[1]["attributes"]["egress_reason"] == WITHHELD
    names = [s["attributes"]["tool_call_names"] for s in spans if s["name"] == "model_call"]
    assert names[:2] == [["fetch"], ["ask_code"]]
    assert names[2] == [WITHHELD, WITHHELD]  # how many calls stays known, not what they were
    ids = [s["attributes"]["tool_call_ids"] for s in spans if s["name"] == "model_call"]
    assert ids[2] == ["t3c0", "t3c1"]  # ids are safe: the view still finds each call
    verdict = next(s for s in spans if s["name"] == "verdict" and s["tainted"])
    assert verdict["attributes"]["tool"] == WITHHELD and verdict["attributes"]["decision"] == "deny"
    page = tmp_path / "run.html"
    shown = run_cli("view", str(trace), "--out", str(page), "--no-open")
    assert shown.returncode == 0, shown.stderr
    html = page.read_text(encoding="utf-8")
    assert SECRET not in html and WITHHELD in html
    assert 'data-call-id="t3c1"' in html


def test_the_view_withholds_what_an_older_trace_file_recorded(tmp_path: Path) -> None:
    """A file written before attributes were withheld still shows no tainted text, and no
    value longer than the cap."""
    header = {"agentkit_trace": 1}
    run = {"name": "run", "span_id": "r", "run_id": "x", "attributes": {"agent": "a"}}
    model = {
        "name": "model_call",
        "span_id": "m",
        "parent_id": "r",
        "run_id": "x",
        "tainted": True,
        "error": f"ProviderError: bad name nosuch_{SECRET}",
        "error_type": "ProviderError",
        "attributes": {"tool_call_ids": ["c"], "tool_call_names": [f"nosuch_{SECRET}"]},
    }
    big = {
        "name": "fold",
        "span_id": "f",
        "parent_id": "r",
        "run_id": "x",
        "attributes": {"fold_error": "y" * 100_000},
    }
    trace = tmp_path / "old.jsonl"
    trace.write_text("".join(json.dumps(d) + "\n" for d in (header, run, model, big)))
    html = render_html(views_from_spans(read_trace_file(trace)), "old")
    assert SECRET not in html and "ProviderError" in html
    assert "y" * (ATTRIBUTE_LIMIT + 1) not in html and "…[cut 95,936 chars]" in html


def test_an_attribute_is_capped_and_the_cut_marked(tmp_path: Path) -> None:
    """A 5 MB hook reason made a 5 MB attribute (and a 20 MB trace file)."""
    reason = "r" * 5_000_000

    def deny_all(call: ToolCall) -> ToolDecision:
        return ToolDecision.deny(reason)

    trace = tmp_path / "run.jsonl"
    with TraceFile(trace, content=False) as exporter:
        model = ScriptedModel([calls(1, ("echo", {"text": "hi"})), "done"])
        hooks = Hooks.of("gate", before_tool_call=deny_all)
        asyncio.run(Agent("a", model, tools=[echo], hooks=hooks, exporters=[exporter]).run("go"))
    assert trace.stat().st_size < 50_000
    verdict = next(s for s in read_trace_file(trace) if s["name"] == "verdict")
    kept = verdict["attributes"]["reason"]
    assert len(kept) <= ATTRIBUTE_LIMIT
    assert kept.startswith("rrrr") and kept.endswith("…[cut 4,995,936 chars]")


# ---------------------------------------------------------------------- properties

#: Where a model-written secret may go, after the person answered it.
FIELDS = ("url", "tool_name", "arguments", "reason", "plugin_attribute")
#: How the run ends: an answer quoting the secret, an ask whose reason (the run's stop reason)
#: quotes it, or a hook raising an error that quotes it.
ENDINGS = ("answer", "ask", "raise")

#: A secret holds a letter and a digit: agentkit's own attribute names and kinds hold no digit, so
#: a secret can never be one of them by chance ("output_t" is in "output_tokens": not a leak).
secrets = st.text(
    alphabet=string.ascii_letters + string.digits + "-_.~", min_size=8, max_size=24
).filter(lambda s: any(c.isalpha() for c in s) and any(c.isdigit() for c in s))


def placed(secret: str, fields: set[str], ending: str) -> list[Any]:
    """A script: the secret is asked for, then written by the model into ``fields``."""
    named: list[tuple[str, dict[str, Any]]] = []
    if "url" in fields:
        named.append(("fetch", {"url": f"http://10.0.0.1/?pin={secret}"}))
    if "tool_name" in fields:
        named.append((f"nosuch_{secret}", {}))
    if "arguments" in fields or "plugin_attribute" in fields:
        named.append(("echo", {"text": secret}))
    if "reason" in fields:
        named.append((f"x{secret}", {"text": secret}))  # denied, the reason quoting both
    script: list[Any] = [calls(1, ("ask_code", {})), calls(2, *named)]
    if ending == "answer":
        script.append(f"the code is {secret}")
    else:
        script.append(calls(3, ("echo", {"text": f"{ending.replace('ask', 'held')} {secret}"})))
        script.append("unreached")
    return script


def strings(value: Any) -> list[str]:
    """Every string in a JSON-like value, keys included."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    secret=secrets,
    fields=st.sets(st.sampled_from(FIELDS), min_size=1),
    ending=st.sampled_from(ENDINGS),
)
def test_no_exported_attribute_holds_a_secret_the_model_wrote(
    tmp_path_factory: Any, secret: str, fields: set[str], ending: str
) -> None:
    """Property: wherever the model writes the secret after the answer, no span's attributes
    or error, in the trace file, the page or OpenTelemetry, hold it; payloads neither."""
    trace = tmp_path_factory.mktemp("t") / "run.jsonl"
    provider, memory = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    otel = OTelExporter(provider, capture_content=True)
    with TraceFile(trace) as exporter:
        made = agent(placed(secret, fields, ending), secret, [exporter, otel])
        try:
            asyncio.run(made.run("go"))
        except Exception:
            assert ending == "raise"
    spans = read_trace_file(trace)
    assert any(s["tainted"] for s in spans)
    assert not [s for s in strings(spans) if secret in s]
    html = render_html(views_from_spans(spans), "run")
    assert secret not in html
    for span in memory.get_finished_spans():
        recorded = [span.name, span.status.description or "", dict(span.attributes or {})]
        assert not [s for s in strings(recorded) if secret in s], span.name


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=6000),
    st.lists(st.text(max_size=300), max_size=40),
    st.dictionaries(st.text(max_size=5), st.text(max_size=3000), max_size=3),
)
keys = st.one_of(st.sampled_from(sorted(SAFE_ATTRIBUTES)), st.text(min_size=1, max_size=12))


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(["run", "model_call", "tool_call", "verdict", "fold"]),
    attributes=st.dictionaries(keys, values, max_size=6),
    tainted=st.booleans(),
)
def test_exported_attributes_are_bounded_and_withhold_text_once_tainted(
    name: str, attributes: dict[str, Any], tainted: bool
) -> None:
    """Property: every exported string fits the cap, a tainted span keeps only safe text, and
    exporting what was exported keeps it within the same bounds."""
    out = export_attributes(name, attributes, tainted)
    assert out.keys() == attributes.keys()
    for key, value in out.items():
        given_value = attributes[key]
        if isinstance(value, str):
            assert len(value) <= ATTRIBUTE_LIMIT
        elif isinstance(value, list):
            assert sum(len(str(v)) for v in value) <= ATTRIBUTE_LIMIT
        if given_value is None or isinstance(given_value, bool | int):
            assert value == given_value
        elif tainted and (key not in SAFE_ATTRIBUTES or (name, key) == ("verdict", "tool")):
            assert all(s == WITHHELD or s.startswith("…[cut ") for s in strings(value))
        elif len(json.dumps(given_value)) <= ATTRIBUTE_LIMIT:
            assert value == given_value  # what fits is kept whole
    again = export_attributes(name, out, tainted)
    assert all(len(v) <= ATTRIBUTE_LIMIT for v in again.values() if isinstance(v, str))


short = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=300) | st.sampled_from(["", "x" * ATTRIBUTE_LIMIT, "x" * 5000]),
    st.lists(st.text(max_size=300) | st.sampled_from(["x" * 4000]), max_size=10),
    st.tuples(st.text(max_size=3), st.integers()),
    st.lists(st.integers(), max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(["run", "model_call", "tool_call", "verdict", "turn"]),
    attributes=st.dictionaries(keys, values | short, max_size=8),
    tainted=st.booleans(),
)
def test_the_read_only_view_is_what_the_rule_makes(
    name: str, attributes: dict[str, Any], tainted: bool
) -> None:
    """Property: handing back the span's own attributes (read-only) shortcuts the full rule only
    where every value comes out of it as it went in."""
    out = export_attributes(name, attributes, tainted)
    full = _export_copy(name, attributes, tainted)
    assert out == full
    if not isinstance(out, dict):
        assert not tainted and all(full[k] is v for k, v in attributes.items())
        with pytest.raises(TypeError):
            out["x"] = 1  # type: ignore[index]
        attributes["late"] = 1
        assert out["late"] == 1  # a live view of the span's own
