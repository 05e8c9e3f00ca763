"""GenAI semantic conventions: ``gen_ai.provider.name`` and ``gen_ai.conversation.id``.

The provider comes from the model string's prefix (a model call's ``provider`` attribute, else
the prefix of its ``model``); the conversation is the session when the run records one (the
run span's ``session_id``), else the run.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentkit_tracing_otel import OTelExporter
from agentkit_tracing_otel._exporter import PROVIDER_NAMES
from agentkit_tracing_otel._exporter import _Shape
from agentkit_tracing_otel._exporter import provider_name
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentkit_core import Agent
from agentkit_core import _genai
from agentkit_core import open_sessions
from agentkit_core._genai import _genai_mapping
from agentkit_core._span_export import WITHHELD
from agentkit_core._span_export import _export_copy
from agentkit_core.plugin import Span
from agentkit_core.testing import ScriptedModel


def exporter() -> tuple[OTelExporter, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    made = TracerProvider()
    made.add_span_processor(SimpleSpanProcessor(memory))
    return OTelExporter(made), memory


def export(run: Span, calls: list[Span]) -> dict[str, dict[str, Any]]:
    """The OpenTelemetry attributes of a run span and its model-call spans, by span name."""
    made, memory = exporter()
    made.on_start(run)
    for call in calls:
        made.on_start(call)
        made.on_end(call)
    made.on_end(run)
    return {s.name: dict(s.attributes or {}) for s in memory.get_finished_spans()}


def run_span(tainted: bool = False, **attributes: Any) -> Span:
    return Span("run", {"agent": "helper", **attributes}, run_id="run-1", tainted=tainted)


def call_span(tainted: bool = False, **attributes: Any) -> Span:
    return Span("model_call", attributes, run_id="run-1", parent="run", tainted=tainted)


def test_a_run_with_a_session_is_that_conversation() -> None:
    spans = export(run_span(session_id="sess-42"), [call_span(model="gpt-4o", provider="openai")])
    assert spans["invoke_agent helper"]["gen_ai.conversation.id"] == "sess-42"
    assert spans["chat gpt-4o"]["gen_ai.conversation.id"] == "sess-42"


def test_a_run_without_a_session_is_its_own_conversation() -> None:
    spans = export(run_span(), [call_span(model="gpt-4o")])
    assert spans["invoke_agent helper"]["gen_ai.conversation.id"] == "run-1"
    assert spans["chat gpt-4o"]["gen_ai.conversation.id"] == "run-1"


def test_a_withheld_session_id_is_not_recorded_as_the_conversation() -> None:
    spans = export(run_span(tainted=True, session_id="sess-42"), [call_span(tainted=True)])
    for attributes in spans.values():
        conversation = attributes["gen_ai.conversation.id"]
        assert conversation in ("sess-42", "run-1") and "withheld" not in conversation


def test_the_provider_is_on_the_call_and_on_the_run() -> None:
    spans = export(run_span(), [call_span(model="gemini-2.5-flash", provider="gemini")])
    assert spans["chat gemini-2.5-flash"]["gen_ai.provider.name"] == "gcp.gemini"
    assert spans["invoke_agent helper"]["gen_ai.provider.name"] == "gcp.gemini"


def test_a_real_run_names_its_provider_from_the_model_string() -> None:
    made, memory = exporter()
    model = ScriptedModel(["Hello."], name="anthropic:claude-test")
    agent = Agent("greeter", model, exporters=[made], hooks=None)
    result = asyncio.run(agent.run("hi"))
    spans = {s.name: dict(s.attributes or {}) for s in memory.get_finished_spans()}
    call = spans["chat anthropic:claude-test"]
    assert call["gen_ai.provider.name"] == "anthropic"
    assert spans["invoke_agent greeter"]["gen_ai.provider.name"] == "anthropic"
    assert spans["invoke_agent greeter"]["gen_ai.conversation.id"] == result.run_id


PREFIX = st.from_regex(r"[a-z][a-z0-9.-]{0,15}", fullmatch=True) | st.sampled_from(
    sorted(PROVIDER_NAMES)
)
NAME = st.from_regex(r"[A-Za-z0-9.-]{1,20}", fullmatch=True)


@settings(max_examples=80, deadline=None)
@given(prefix=PREFIX, name=NAME)
def test_the_provider_is_the_prefix_in_the_conventions_spelling(prefix: str, name: str) -> None:
    """Property: a prefix maps to its conventions name or itself, from either attribute."""
    expected = PROVIDER_NAMES.get(prefix, prefix)
    assert provider_name(prefix) == expected
    assert provider_name(None, f"{prefix}:{name}") == expected
    assert provider_name(prefix, f"other:{name}") == expected  # the provider attribute wins
    assert provider_name(None, name) is None  # a model name without a prefix says nothing


def test_a_real_provider_run_in_a_session_names_both(pm) -> None:
    """A provider answers with its bare model id; the run records a session."""
    from agentkit_core import Message
    from agentkit_core import Recorder
    from agentkit_core import Usage
    from agentkit_core.plugin import ModelResponse

    made, memory = exporter()
    answer = ModelResponse(Message.assistant("Hello."), Usage(3, 2, 1), model="gemini-2.5-flash")
    model = ScriptedModel([answer], name="gemini:gemini-2.5-flash")

    async def go() -> str:
        async with await open_sessions("memory://", manager=pm) as sessions:
            recorder = await Recorder.start(sessions)
            agent = Agent("greeter", model, exporters=[made], hooks=None, recorder=recorder)
            await agent.run("hi")
            return recorder.session_id

    session = asyncio.run(go())
    spans = {s.name: dict(s.attributes or {}) for s in memory.get_finished_spans()}
    call = spans["chat gemini-2.5-flash"]
    assert call["gen_ai.provider.name"] == "gcp.gemini"
    assert call["gen_ai.conversation.id"] == session
    assert spans["invoke_agent greeter"]["gen_ai.conversation.id"] == session


TEXT = st.text(max_size=300) | st.sampled_from(["", "x" * 5000])
VALUE = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | TEXT
    | st.lists(TEXT, max_size=10)
    | st.lists(st.integers(), max_size=3)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(["run", "model_call", "tool_call", "turn", "verdict"]),
    attributes=st.dictionaries(st.sampled_from(["tool", "model", "reason", "n"]), VALUE),
    tainted=st.booleans(),
)
def test_the_attributes_read_are_the_exported_ones(
    name: str, attributes: dict[str, Any], tainted: bool
) -> None:
    """Property: what the exporter records from core's read-only view of a span's own
    attributes (no copy, values taken as they are) is what it records from the rule's copy."""
    span = Span(name, attributes, tainted=tainted)
    read = span.exported_attributes()
    copy = _export_copy(name, attributes, tainted)
    assert read == copy
    assert _genai_mapping(name, read, False) == _genai_mapping(name, copy, False)
    shape = _Shape(name)
    assert shape.title(span, read) == shape.title(span, copy)


def test_names_made_up_at_run_time_are_not_kept_without_bound(monkeypatch: Any) -> None:
    """Span names and attribute keys the exporter remembers stay bounded, however many."""
    from agentkit_tracing_otel import _exporter

    monkeypatch.setattr(_exporter, "_SHAPES", {})
    monkeypatch.setattr(_genai, "_GENAI_SEEN", {})  # core's GenAI names per span name
    made, memory = exporter()
    many = 2 * _exporter._KEPT
    for i in range(many):
        for span in (Span(f"step {i}", {"n": i}), Span("step", {f"score_{i}": i})):
            made.on_start(span)
            made.on_end(span)
    assert len(_exporter._SHAPES) <= _exporter._KEPT
    assert len(_genai._GENAI_SEEN) <= _genai._KEPT
    assert len(_genai._GENAI_SEEN["step"]) <= _genai._KEPT
    last = dict(memory.get_finished_spans()[-1].attributes or {})
    assert last == {f"agentkit.score_{many - 1}": many - 1}


def test_a_model_call_is_named_by_the_model_that_answered_it() -> None:
    """A call starts named as its run's last call was and is renamed at its end when another
    model answered (or none said which); a run starts from the bare name."""
    made, memory = exporter()
    for run_id, models in (("run-1", ["a", "a", "b", "", "b"]), ("run-2", ["c"])):
        run = Span("run", {"agent": "helper"}, run_id=run_id)
        made.on_start(run)
        for model in models:
            call = Span("model_call", {"messages": 1}, run_id=run_id, parent_id=run.span_id)
            made.on_start(call)
            if model:
                call.set("model", model)
            made.on_end(call)
        made.on_end(run)
    names = [s.name for s in memory.get_finished_spans() if s.name.startswith("chat")]
    assert names == ["chat a", "chat a", "chat b", "chat", "chat b", "chat c"]


def test_a_span_is_started_when_something_starts_under_it_else_whole_at_its_end() -> None:
    """Nesting, names and times hold whether a span's OpenTelemetry span began at its start
    (something started under it: a child run under a tool call) or whole at its end."""
    made, memory = exporter()
    run = Span("run", {"agent": "parent"}, run_id="r1")
    turn = Span("turn", {"turn": 1}, run_id="r1", parent_id=run.span_id)
    tool = Span("tool_call", {"tool": "ask", "call_id": "c1"}, run_id="r1", parent_id=turn.span_id)
    child = Span("run", {"agent": "child"}, run_id="r2", parent_id=tool.span_id)
    call = Span("model_call", {"messages": 1}, run_id="r2", parent_id=child.span_id)
    for span in (run, turn, tool, child, call):
        made.on_start(span)
    call.set("model", "m")
    call.end_ns = call.start_ns + 5
    for span in (call, child, tool, turn, run):
        made.on_end(span)
    spans = {s.name: s for s in memory.get_finished_spans()}
    parent = {name: s.parent.span_id if s.parent else None for name, s in spans.items()}
    ids = {name: s.context.span_id for name, s in spans.items()}
    assert parent["turn 1"] == ids["invoke_agent parent"]
    assert parent["execute_tool ask"] == ids["turn 1"]
    assert parent["invoke_agent child"] == ids["execute_tool ask"]
    assert parent["chat m"] == ids["invoke_agent child"]
    assert (spans["chat m"].start_time, spans["chat m"].end_time) == (call.start_ns, call.end_ns)
    assert spans["chat m"].attributes["gen_ai.request.model"] == "m"


def test_a_span_started_early_ends_with_what_it_has_then() -> None:
    """A span started early (a turn, at its start) carries the attributes it has
    at its end: what it gained or changed since, and a text withheld if the run was tainted
    meanwhile."""
    made, memory = exporter()
    run = Span("run", {"agent": "helper"}, run_id="r1")
    kept = Span("turn", {"turn": 1}, run_id="r1", parent_id=run.span_id)
    grown = Span("turn", {"turn": 2}, run_id="r1", parent_id=run.span_id)
    texted = Span("step", {"n": 1, "note": "secret"}, run_id="r1", parent_id=run.span_id)
    made.on_start(run)
    for span in (kept, grown, texted):
        made.on_start(span)
        call = Span("model_call", {"messages": 1}, run_id="r1", parent_id=span.span_id)
        made.on_start(call)
        made.on_end(call)
        if span is grown:
            span.set("turn", 3)
            span.set("late", "yes")
        if span is texted:
            span.tainted = True
        made.on_end(span)
    made.on_end(run)
    spans = {s.name: dict(s.attributes or {}) for s in memory.get_finished_spans()}
    assert spans["turn 1"] == {"agentkit.turn": 1}
    assert spans["turn 2"] == {"agentkit.turn": 3, "agentkit.late": "yes"}
    assert spans["step"] == {"agentkit.n": 1, "agentkit.note": WITHHELD}


def test_made_model_calls_get_the_conversation_and_provider_worked_out_each_time() -> None:
    """Calls whose attributes core made get what the first such call to the same model got
    (kept per run) until a call names the run's provider: one that names none says that one."""
    models = ["scripted", "scripted", "openai:gpt-4o", "scripted", "openai:gpt-4o", "other"]

    def attributes(made: bool) -> list[dict[str, Any]]:
        exported, memory = exporter()
        run = run_span()
        exported.on_start(run)
        for i, model in enumerate(models):
            call = call_span(model=model, messages=i)
            call.parent_id = run.span_id
            if made:
                call.genai = dict(call.genai_attributes())
            exported.on_start(call)
            exported.on_end(call)
        exported.on_end(run)
        return [dict(s.attributes or {}) for s in memory.get_finished_spans()]

    worked_out = attributes(made=False)
    assert attributes(made=True) == worked_out
    providers = [a.get("gen_ai.provider.name") for a in worked_out]
    assert providers == [None, None, "openai", "openai", "openai", "openai", "openai"]
