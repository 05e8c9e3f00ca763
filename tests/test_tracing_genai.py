"""Core's GenAI names for exporters: what a model or tool call's span makes where core sets its
attributes (``Span.genai``) is what mapping its exported attributes gives, or nothing.

Core makes them inside its tracing middleware (``_stamp``, ``wrap_tool``), not in a function of
their own (a call fewer a traced call): these tests drive those pieces with real spans."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core._genai import run_genai
from agentkit_core._invoke import _stamp
from agentkit_core._invoke import _Tracing
from agentkit_core._middleware import ToolInvocation
from agentkit_core._models import ModelResponse
from agentkit_core._span_export import ATTRIBUTE_LIMIT
from agentkit_core._span_export import export_attributes
from agentkit_core._tools import Tool
from agentkit_core._tools import ToolResult
from agentkit_core._tracing import Span
from agentkit_core._tracing import Trace
from agentkit_core.plugin import SpanExporter
from agentkit_core.testing import ScriptedModel

# around the cap, made cheaply: a drawn 5,000-character text makes hypothesis slow
long_texts = st.builds(str.__mul__, st.sampled_from("xé日"), st.integers(ATTRIBUTE_LIMIT - 2, 5000))
texts = st.one_of(st.text(max_size=20), long_texts)
anything = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts)
tokens = st.one_of(st.integers(0, 10**6), st.none())
extra = st.dictionaries(st.sampled_from(["provider", "cost", "cache_read_tokens", "x"]), anything)


def mapped(name: str, attributes: dict[str, Any], tainted: bool = False) -> Any:
    """What the span maps from its exported attributes (no ``genai`` of core's)."""
    return Span(name, attributes, tainted=tainted).genai_attributes()


@settings(max_examples=150, deadline=None)
@given(
    model=texts,
    reason=st.one_of(texts, st.none()),
    ids=st.lists(st.one_of(st.text(max_size=8), st.integers(1, 2100).map("i".__mul__)), max_size=4),
    sent=tokens,
    received=tokens,
    more=extra,
)
def test_a_model_calls_genai_is_its_mapped_exported_attributes(
    model: str, reason: str | None, ids: list[str], sent: Any, received: Any, more: Any
) -> None:
    span = Span("model_call", {"messages": 3, **more})  # ``more``: a plugin's, set first
    calls = [ToolCall(i, name, "{}") for i, name in zip(ids, reversed(ids), strict=True)]
    usage = Usage(input_tokens=sent, output_tokens=received)
    _stamp(span, ModelResponse(Message.assistant("", calls), usage, reason, model), True)
    made = span.genai
    assert span.attributes["tool_call_names"] == list(reversed(ids))
    if made is not None:
        assert made == mapped("model_call", span.attributes)
    # texts that fit together (Unicode ones too) take the short way; ones that fit only one
    # by one may take the general mapping, which exports the same
    fits = len(model + "stop" + "".join(ids) * 2) <= ATTRIBUTE_LIMIT
    if not more and fits and reason == "stop" and sent is not None and received is not None:
        assert made is not None  # the common case takes the short way


@settings(max_examples=100, deadline=None)
@given(tool=texts, call_id=texts, is_error=st.booleans(), size=st.integers(0, 50), more=extra)
def test_a_tool_calls_genai_is_its_mapped_exported_attributes(
    tool: str, call_id: str, is_error: bool, size: int, more: Any
) -> None:
    seen: list[tuple[Any, dict[str, Any]]] = []

    class Reader(SpanExporter):
        genai = True

        def on_start(self, span: Span) -> None:
            span.attributes.update(more)  # a plugin's attributes, set as the call starts

        def on_end(self, span: Span) -> None:
            seen.append((span.genai, dict(span.attributes)))

    async def result(invocation: ToolInvocation) -> ToolResult:
        return ToolResult("x" * size, is_error=is_error)

    ctx = RunContext()
    ctx.trace.attach([Reader()])
    invocation = ToolInvocation(ToolCall(call_id, tool, "{}"), Tool(tool), {}, ctx)
    asyncio.run(_Tracing().wrap_tool(invocation, result))
    [(made, attributes)] = seen
    assert attributes["result_chars"] == size
    if made is not None:
        assert made == mapped("tool_call", attributes)
    if not more and len(tool) <= ATTRIBUTE_LIMIT and len(call_id) <= ATTRIBUTE_LIMIT:
        assert made is not None


@settings(max_examples=150, deadline=None)
@given(
    agent=texts,
    model=texts,
    session=st.one_of(st.none(), texts),
    reason=st.one_of(st.none(), texts),
    sent=tokens,
    cost=st.one_of(st.none(), st.floats(allow_nan=False)),
    pending=st.one_of(st.lists(texts, max_size=3), st.tuples(st.integers()), st.just([[1]])),
    more=st.dictionaries(st.sampled_from(["agent", "input_tokens", "requests", "x"]), anything),
    listed=st.sampled_from(["agent", "output_tokens", "task_item", "status"]),
)
def test_a_runs_genai_is_its_mapped_exported_attributes(
    agent: str,
    model: str,
    session: str | None,
    reason: str | None,
    sent: Any,
    cost: float | None,
    pending: Any,
    more: Any,
    listed: str,
) -> None:
    started = {"agent": agent, "model": model, **({"session_id": session} if session else {})}
    ended = {"status": "done", "stop_reason": reason, "input_tokens": sent, "requests": 2}
    attributes = {**started, **more, **ended, "cost": cost, "pending": pending}
    made = run_genai(attributes)
    if made is not None:
        assert list(made.items()) == list(mapped("run", attributes).items())  # in order, too
    texts_fit = all(len(t or "") <= ATTRIBUTE_LIMIT for t in (agent, model, session, reason))
    ids_fit = type(pending) is list and all(type(i) is str for i in pending)
    ids_fit = ids_fit and len("".join(pending)) <= ATTRIBUTE_LIMIT
    if not more and texts_fit and ids_fit:
        assert made is not None  # what core sets takes the short way
    # a list where the conventions name the attribute is mapped as its text: the long way
    assert run_genai({**attributes, listed: ["a"]}) in (
        None,
        mapped("run", {**attributes, listed: ["a"]}),
    )


def test_a_tainted_span_maps_its_exported_attributes_not_cores_own() -> None:
    """Core's made mapping is of the raw values: once tainted, the span's text is withheld."""
    attributes = {"tool": "fetch", "call_id": "c1", "is_error": False, "result_chars": 2}
    span = Span("tool_call", {**attributes, "url": "https://secret"}, tainted=True)
    span.genai = {"agentkit.url": "https://secret"}
    assert span.genai_attributes()["agentkit.url"] != "https://secret"
    exported = export_attributes("tool_call", span.attributes, True)
    assert span.genai_attributes()["agentkit.url"] == exported["url"]


def test_a_traced_runs_calls_hand_exporters_cores_genai_and_keep_none() -> None:
    """A run with an exporter: each model and tool call's exporter, and the run's, reads core's
    own mapping; the spans the run keeps hold no second dict once exported."""
    seen: dict[str, Any] = {}

    class Reader(SpanExporter):
        genai = True

        def on_end(self, span: Span) -> None:
            if span.name in ("model_call", "tool_call", "run"):
                seen.setdefault(span.name, (span.genai, span.genai_attributes()))

    def echo(text: str) -> str:
        """Echo the text."""
        return text

    call = Message.assistant("", [ToolCall("c0", "echo", json.dumps({"text": "a"}))])
    ctx = RunContext()
    agent = Agent("a", ScriptedModel([call, "done"]), tools=[echo], exporters=[Reader()])
    asyncio.run(agent.run("go", ctx=ctx))
    for name in ("model_call", "tool_call", "run"):
        made, given_ = seen[name]
        assert made is not None and given_ is made
        span = ctx.trace.find(name)[0]
        assert span.genai is None
        assert span.genai_attributes() == made


def test_a_turns_mapping_is_worked_out_from_what_it_has_at_its_end() -> None:
    """Core makes no mapping of a turn's (its exporters start it with its number); each turn
    hands its exporters what mapping its attributes give at its end, also once a plugin
    added one."""
    seen: list[tuple[Any, Any]] = []

    class Reader(SpanExporter):
        genai = True

        def on_end(self, span: Span) -> None:
            if span.name == "turn":
                assert span.genai is None
                worked_out = mapped("turn", dict(span.attributes), span.tainted)
                seen.append((dict(span.genai_attributes()), worked_out))

    def echo(text: str) -> str:
        """Echo the text, noting it on the turn."""
        if text == "b":
            ctx.trace.find("turn")[-1].set("note", text)
        return text

    calls = [
        Message.assistant("", [ToolCall(f"c{t}", "echo", json.dumps({"text": t}))]) for t in "ab"
    ]
    ctx = RunContext()
    agent = Agent("a", ScriptedModel([*calls, "done"]), tools=[echo], exporters=[Reader()])
    asyncio.run(agent.run("go", ctx=ctx))
    assert [given_ for given_, _ in seen] == [worked for _, worked in seen]
    assert seen[0][0] == {"agentkit.turn": 1}
    assert seen[1][0] == {"agentkit.turn": 2, "agentkit.note": "b"}


def test_a_call_that_failed_or_turned_tainted_hands_exporters_no_made_mapping() -> None:
    """Core's made mapping is of raw values and carries no error: at ``on_end`` a call the
    run's secret taint reached while it ran, or that raised, has none (``Span.genai`` None),
    so an exporter that takes it as it is needs no check of its own."""
    seen: dict[str, Any] = {}

    class Reader(SpanExporter):
        genai = True

        def on_end(self, span: Span) -> None:
            if span.name == "tool_call":
                seen[span.attributes["call_id"]] = (span.genai, span.tainted, span.error)

    async def ask_code(ctx: RunContext) -> str:
        """Ask the person for a one-time code."""
        return str(await ctx.elicit("Code?", secret=True))

    async def person(question: str, schema: Any, secret: bool) -> str:
        return "hunter2"

    script = [Message.assistant("", [ToolCall(c, "ask_code", "{}")]) for c in ("c0", "c1")]
    agent = Agent(
        "a",
        ScriptedModel([*script, "done"]),
        tools=[ask_code],
        elicitor=person,
        exporters=[Reader()],
    )
    asyncio.run(agent.run("go"))
    assert seen["c0"] == (None, True, None)  # tainted while it ran
    assert seen["c1"] == (None, True, None)  # tainted from its start

    trace = Trace(exporters=[Reader()])
    for call, exc in (("c2", None), ("c3", RuntimeError("no"))):
        span = trace.open("tool_call", call_id=call)
        span.genai = {"gen_ai.tool.call.id": call}
        trace.close(span, exc)
    assert seen["c2"][0] == {"gen_ai.tool.call.id": "c2"}
    assert seen["c3"] == (None, False, "RuntimeError: no")
