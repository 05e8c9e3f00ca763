"""Runs as OpenTelemetry spans: the SDK's in-memory exporter, and a real OTLP/HTTP collector."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentkit_tracing_otel import OTelExporter
from agentkit_tracing_otel import from_environment
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from otel_collector import Collector
from otel_collector import attributes

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginError
from agentkit_core import ProviderError
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core.plugin import span_exporters
from agentkit_core.testing import ScriptedModel

CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "agentkit.task",
    "agentkit.output",
}


def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    made = TracerProvider()
    made.add_span_processor(SimpleSpanProcessor(memory))
    return made, memory


def calls(*names_args: tuple[str, dict[str, Any]]) -> Message:
    return Message.assistant(
        "",
        [ToolCall(f"c{i}", name, json.dumps(args)) for i, (name, args) in enumerate(names_args)],
    )


def run(agent: Agent, task: str = "weather in Paris?", **kwargs: Any) -> Any:
    return asyncio.run(agent.run(task, **kwargs))


def test_a_run_is_genai_spans_nested_run_turn_call() -> None:
    made, memory = provider()
    model = ScriptedModel([calls(("weather", {"city": "Paris"})), "It is sunny."])
    agent = Agent("forecaster", model, tools=[weather], exporters=[OTelExporter(made)], hooks=None)
    result = run(agent)
    assert result.output == "It is sunny."
    spans = {s.name: s for s in memory.get_finished_spans()}
    assert {"invoke_agent forecaster", "turn 1", "turn 2", "chat scripted"} <= set(spans)
    assert "execute_tool weather" in spans
    root = spans["invoke_agent forecaster"]
    tool = spans["execute_tool weather"]
    turn1 = spans["turn 1"]
    assert root.parent is None
    assert turn1.parent is not None and turn1.parent.span_id == root.context.span_id
    assert tool.parent is not None and tool.parent.span_id == turn1.context.span_id
    assert {s.context.trace_id for s in memory.get_finished_spans()} == {root.context.trace_id}
    a = dict(root.attributes or {})
    assert a["gen_ai.operation.name"] == "invoke_agent"
    assert a["gen_ai.agent.name"] == "forecaster"
    assert a["gen_ai.conversation.id"] == result.run_id
    assert a["gen_ai.usage.input_tokens"] == result.usage.input_tokens
    assert a["agentkit.status"] == "done"
    t = dict(tool.attributes or {})
    assert t["gen_ai.operation.name"] == "execute_tool"
    assert t["gen_ai.tool.name"] == "weather" and t["gen_ai.tool.call.id"] == "c0"
    chats = [s for s in memory.get_finished_spans() if s.name == "chat scripted"]
    assert len(chats) == 2
    c = dict(chats[0].attributes or {})
    assert c["gen_ai.operation.name"] == "chat" and c["gen_ai.request.model"] == "scripted"
    assert c["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert c["gen_ai.usage.output_tokens"] > 0
    # the wall-clock times are agentkit's own
    assert root.start_time <= turn1.start_time <= tool.start_time <= tool.end_time
    # no content unless asked for
    for span in memory.get_finished_spans():
        assert not CONTENT_KEYS & set(span.attributes or {}), span.name


def test_content_is_recorded_only_when_asked() -> None:
    made, memory = provider()
    model = ScriptedModel([calls(("weather", {"city": "Paris"})), "It is sunny."])
    exporter = OTelExporter(made, capture_content=True)
    run(Agent("a", model, tools=[weather], exporters=[exporter], hooks=Hooks()))
    spans = {s.name: dict(s.attributes or {}) for s in memory.get_finished_spans()}
    tool = spans["execute_tool weather"]
    assert json.loads(tool["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    assert json.loads(tool["gen_ai.tool.call.result"]) == "sunny in Paris"
    first_chat = next(
        dict(s.attributes or {}) for s in memory.get_finished_spans() if s.name.startswith("chat")
    )
    sent = json.loads(first_chat["gen_ai.input.messages"])
    assert [m["role"] for m in sent] == ["user"] and sent[0]["content"] == "weather in Paris?"
    chats = [
        dict(s.attributes or {}) for s in memory.get_finished_spans() if s.name.startswith("chat")
    ]
    second = json.loads(chats[1]["gen_ai.input.messages"])  # encoded once, sent again whole
    assert [m["role"] for m in second] == ["user", "assistant", "tool"]
    assert second[0] == sent[0] and second[2]["content"] == "sunny in Paris"
    assert json.loads(spans["invoke_agent a"]["agentkit.output"]) == "It is sunny."


def test_environment_opts_in_to_content(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    assert OTelExporter(TracerProvider()).capture_content is True
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")
    assert OTelExporter(TracerProvider()).capture_content is False


SECRET = "hunter2-one-time-code"


async def ask_code(ctx: RunContext) -> str:
    """Ask the person for the one-time code."""
    return str(await ctx.elicit("One-time code?", secret=True))


def echo(text: str) -> str:
    """Echo the text."""
    return text


def test_a_secret_tainted_run_never_exports_content() -> None:
    made, memory = provider()

    async def person(question: str, schema: Any, secret: bool) -> str:
        return SECRET

    model = ScriptedModel(
        [
            calls(("echo", {"text": "before"})),
            calls(("ask_code", {})),
            calls(("echo", {"text": SECRET})),
            f"the code was {SECRET}",
        ]
    )
    agent = Agent(
        "a",
        model,
        tools=[echo, ask_code],
        elicitor=person,
        exporters=[OTelExporter(made, capture_content=True)],
    )
    result = run(agent)
    assert result.status == "done"
    finished = memory.get_finished_spans()
    text = json.dumps([dict(s.attributes or {}) for s in finished])
    assert SECRET not in text
    assert "before" in text  # content before the taint was recorded: the opt-in works
    tainted = [s for s in finished if s.name == "execute_tool echo"][1]
    assert not CONTENT_KEYS & set(tainted.attributes or {})


def test_errors_mark_the_span_and_name_the_plugin() -> None:
    made, memory = provider()
    model = ScriptedModel([ProviderError("the provider is down")])
    agent = Agent("a", model, exporters=[OTelExporter(made)])
    with pytest.raises(ProviderError):
        run(agent)
    root = next(s for s in memory.get_finished_spans() if s.name == "invoke_agent a")
    assert root.status.status_code is StatusCode.ERROR
    assert dict(root.attributes or {})["error.type"] == "ProviderError"

    made, memory = provider()

    def broken(request: Any) -> Any:
        raise PluginError("the plugin broke", plugin="acme-broken")

    agent = Agent("a", ScriptedModel([broken]), exporters=[OTelExporter(made)])
    with pytest.raises(PluginError):
        run(agent)
    chat = next(s for s in memory.get_finished_spans() if s.name.startswith("chat"))
    assert dict(chat.attributes or {})["agentkit.error.plugin"] == "acme-broken"


def test_spans_nest_under_the_applications_current_span() -> None:
    made, memory = provider()
    tracer = made.get_tracer("app")
    agent = Agent("a", ScriptedModel(["hi"]), exporters=[OTelExporter(made)])
    with tracer.start_as_current_span("request") as outer:
        run(agent)
    root = next(s for s in memory.get_finished_spans() if s.name == "invoke_agent a")
    assert root.parent is not None and root.parent.span_id == outer.get_span_context().span_id


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(
        st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=3),
        min_size=0,
        max_size=4,
    ),
    capture=st.booleans(),
    taint_at=st.integers(min_value=-1, max_value=4),
)
def test_every_span_is_exported_once_with_its_parent(
    turns: list[list[str]], capture: bool, taint_at: int
) -> None:
    """Property: OTel spans mirror agentkit's one for one, parents included; taint hides all."""
    made, memory = provider()
    script: list[Any] = []
    for i, texts in enumerate(turns):
        if i == taint_at:
            script.append(calls(("ask_code", {})))
        script.append(calls(*[("echo", {"text": t}) for t in texts]))
    script.append("done")

    async def person(question: str, schema: Any, secret: bool) -> str:
        return SECRET

    agent = Agent(
        "p",
        ScriptedModel(script),
        tools=[echo, ask_code],
        elicitor=person,
        exporters=[OTelExporter(made, capture_content=capture)],
        max_turns=len(script) + 1,
    )
    ctx = agent.new_context()
    asyncio.run(agent.run("go", ctx=ctx))
    core = [s for s in ctx.trace.spans if s.end is not None and s.name != "detached"]
    otel = memory.get_finished_spans()
    assert len(otel) == len(core)
    by_core = {s.span_id: o for s, o in zip(core, sorted(otel, key=_order(core)), strict=True)}
    for span in core:
        exported = by_core[span.span_id]
        assert exported.start_time == span.start_ns and exported.end_time == span.end_ns
        parent = by_core.get(span.parent_id or "")
        if parent is not None:
            assert exported.parent is not None
            assert exported.parent.span_id == parent.context.span_id
        keys = set(exported.attributes or {})
        if span.tainted or not capture:
            assert not CONTENT_KEYS & keys
        elif span.name == "tool_call":
            assert "gen_ai.tool.call.arguments" in keys
    assert SECRET not in json.dumps([dict(s.attributes or {}) for s in otel])


def _order(core: list[Any]) -> Any:
    starts = [s.start_ns for s in core]

    def key(span: Any) -> int:
        return starts.index(span.start_time)

    return key


# ---------------------------------------------------------------------- configuration


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    return monkeypatch


def test_without_otel_variables_nothing_is_exported(clean_env: pytest.MonkeyPatch, pm) -> None:
    assert from_environment() is None
    assert not any(isinstance(e, OTelExporter) for e in span_exporters(manager=pm))


def test_disabled_and_none_export_nothing(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    clean_env.setenv("OTEL_SDK_DISABLED", "true")
    assert from_environment() is None
    clean_env.delenv("OTEL_SDK_DISABLED")
    clean_env.setenv("OTEL_TRACES_EXPORTER", "none")
    assert from_environment() is None


def test_an_unknown_exporter_name_is_a_clear_error(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with pytest.raises(ConfigError, match=r"OTEL_TRACES_EXPORTER='zipkin'.*otlp"):
        from_environment()


def test_an_endpoint_turns_export_on(clean_env: pytest.MonkeyPatch, pm) -> None:
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    exporter = from_environment()
    assert isinstance(exporter, OTelExporter)
    assert isinstance(span_exporters(manager=pm)[0], OTelExporter)


# ---------------------------------------------------------------------- a real collector

TOOLS = Path(__file__).parent / "weather_tools.py"


def test_agentkit_run_sends_spans_to_an_otlp_http_collector(
    collector: Collector, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTKIT_"))}
    env.update(
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
        OTEL_SERVICE_NAME="observe-test",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test",
        OTEL_EXPORTER_OTLP_HEADERS="x-team=agents",
    )
    out = subprocess.run(
        [
            *(sys.executable, "-m", "agentkit_core", "run", "weather?"),
            *("--model", "test", "--tools", "weather_tools:TOOLS", "--quiet"),
        ],
        cwd=Path(__file__).parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert collector.received.wait(10), "the collector received nothing"
    assert set(collector.paths) == {"/v1/traces"}
    assert collector.headers[0].get("x-team") == "agents"
    spans = collector.spans()
    names = {span.name for _, span in spans}
    assert {"invoke_agent cli", "turn 1", "chat test", "execute_tool weather"} <= names
    resource = spans[0][0]
    assert resource["service.name"] == "observe-test"
    assert resource["deployment.environment"] == "test"
    tool = next(span for _, span in spans if span.name == "execute_tool weather")
    assert attributes(tool)["gen_ai.tool.name"] == "weather"
    assert "gen_ai.tool.call.arguments" not in attributes(tool)


def test_a_run_the_sampler_drops_exports_nothing_and_keeps_nothing() -> None:
    """The provider's sampler is asked at the run's root; a dropped run's spans are skipped."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
    from opentelemetry.sdk.trace.sampling import ParentBased
    from opentelemetry.sdk.trace.sampling import TraceIdRatioBased

    memory = InMemorySpanExporter()
    made = TracerProvider(sampler=ALWAYS_OFF)
    made.add_span_processor(SimpleSpanProcessor(memory))
    exporter = OTelExporter(made)
    model = ScriptedModel([calls(("weather", {"city": "Paris"})), "It is sunny."])
    agent = Agent("forecaster", model, tools=[weather], exporters=[exporter], hooks=None)
    assert run(agent).output == "It is sunny."
    assert memory.get_finished_spans() == ()
    assert not exporter._live and not exporter._dropped and not exporter._runs
    assert not exporter._contexts
    # a ratio of 1 keeps every run, whole, as without a sampler
    memory = InMemorySpanExporter()
    kept = TracerProvider(sampler=ParentBased(TraceIdRatioBased(1.0)))
    kept.add_span_processor(SimpleSpanProcessor(memory))
    model = ScriptedModel([calls(("weather", {"city": "Paris"})), "It is sunny."])
    recording = OTelExporter(kept)
    agent = Agent("forecaster", model, tools=[weather], exporters=[recording], hooks=None)
    run(agent)
    assert not recording._live and not recording._contexts
    names = {s.name for s in memory.get_finished_spans()}
    assert {"invoke_agent forecaster", "turn 1", "chat scripted", "execute_tool weather"} <= names


def test_a_run_that_keeps_no_spans_exports_every_span() -> None:
    """An agent-made context keeps no finished spans; the exporter still gets each of them."""
    shapes = []
    for passed in (False, True):
        made, memory = provider()
        model = ScriptedModel([calls(("weather", {"city": "Paris"})), "It is sunny."])
        agent = Agent("forecaster", model, tools=[weather], exporters=[OTelExporter(made)])
        ctx = RunContext() if passed else None
        run(agent, ctx=ctx)
        spans = memory.get_finished_spans()
        if ctx is not None:
            assert len(ctx.trace.spans) == len(spans)
        shapes.append(sorted((s.name, sorted(s.attributes or {})) for s in spans))
    assert shapes[0] == shapes[1]


def dropping_turn_two() -> tuple[OTelExporter, InMemorySpanExporter]:
    """An exporter on a sampler that decides each span itself (not by its parent) and drops
    the span named ``turn 2``, and the memory its kept spans go to."""
    from opentelemetry.sdk.trace.sampling import Decision
    from opentelemetry.sdk.trace.sampling import Sampler
    from opentelemetry.sdk.trace.sampling import SamplingResult

    class NotTurnTwo(Sampler):
        def should_sample(self, parent: Any, trace: int, name: str, *rest: Any) -> Any:
            keep = name != "turn 2"
            return SamplingResult(Decision.RECORD_AND_SAMPLE if keep else Decision.DROP)

        def get_description(self) -> str:
            return "not turn 2"

    memory = InMemorySpanExporter()
    made = TracerProvider(sampler=NotTurnTwo())
    made.add_span_processor(SimpleSpanProcessor(memory))
    return OTelExporter(made), memory


def under(memory: InMemorySpanExporter) -> list[tuple[str, str | None]]:
    """Each exported span's name and its parent's, sorted."""
    spans = memory.get_finished_spans()
    by_id = {s.context.span_id: s.name for s in spans}
    return sorted((s.name, by_id.get(s.parent.span_id) if s.parent else None) for s in spans)


def assert_nothing_held(exporter: OTelExporter) -> None:
    assert not exporter._live and not exporter._dropped and not exporter._runs
    assert not exporter._contexts and not exporter._waiting


def test_a_span_a_per_span_sampler_drops_is_skipped_with_everything_under_it() -> None:
    """A sampler that decides each span itself (not by its parent) dropping one turn: that
    turn and its calls are left out, every other span is kept, and nothing is left held."""
    exporter, memory = dropping_turn_two()
    script = [calls(("weather", {"city": c})) for c in ("Paris", "Rome")]
    model = ScriptedModel([*script, "Sunny twice."])
    agent = Agent("forecaster", model, tools=[weather], exporters=[exporter], hooks=None)
    assert run(agent).output == "Sunny twice."
    assert under(memory) == [
        ("chat scripted", "turn 1"),
        ("chat scripted", "turn 3"),
        ("execute_tool weather", "turn 1"),
        ("invoke_agent forecaster", None),
        ("turn 1", "invoke_agent forecaster"),
        ("turn 3", "invoke_agent forecaster"),
    ]
    assert_nothing_held(exporter)


def test_spans_nested_under_a_waiting_span_the_sampler_dropped_are_skipped() -> None:
    """Spans two and three deep under a dropped turn's tool call (the call waits until its
    first child starts, which finds the turn dropped) are left out with it; the same nest
    under a kept turn is exported whole, and nothing is left held."""
    exporter, memory = dropping_turn_two()
    trace = RunContext().trace
    trace.attach([exporter])
    with trace.span("run", agent="nest"):
        for number in (1, 2):
            trace.step("turn", turn=number)
            with trace.span("tool_call", tool="weather", call_id=f"c{number}"):
                with trace.span("verdict", decision="allow"):
                    with trace.span("fold"):
                        pass
                with trace.span("guardrail"):
                    pass
    assert under(memory) == [
        ("execute_tool weather", "turn 1"),
        ("fold", "verdict"),
        ("guardrail", "execute_tool weather"),
        ("invoke_agent nest", None),
        ("turn 1", "invoke_agent nest"),
        ("verdict", "execute_tool weather"),
    ]
    assert_nothing_held(exporter)


def test_content_nested_past_the_encoder_keeps_every_span() -> None:
    """A model's arguments nested 300 deep raised while recording them: the exporter was
    detached, so the tool call, the turns and the run were never exported."""
    made, memory = provider()
    deep = json.dumps({"city": json.loads("[" * 300 + "]" * 300)})
    model = ScriptedModel(
        [Message.assistant("", tool_calls=[ToolCall("c", "weather", deep)]), "ok"]
    )
    exporter = OTelExporter(made, capture_content=True)
    run(Agent("a", model, tools=[weather], exporters=[exporter], hooks=Hooks()))
    spans = {s.name: dict(s.attributes or {}) for s in memory.get_finished_spans()}
    assert {"invoke_agent a", "execute_tool weather", "turn 1", "turn 2"} <= set(spans)
    assert "not recorded" in spans["execute_tool weather"]["gen_ai.tool.call.arguments"]


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("OTEL_SDK_DISABLED", "ture", r"OTEL_SDK_DISABLED='ture' is not true or false"),
        ("OTEL_TRACES_SAMPLER", "bogus", r"OTEL_TRACES_SAMPLER='bogus' is not one of always_on"),
        ("OTEL_TRACES_SAMPLER_ARG", "abc", r"OTEL_TRACES_SAMPLER_ARG='abc' is not a ratio"),
        ("OTEL_TRACES_SAMPLER_ARG", "5", r"OTEL_TRACES_SAMPLER_ARG='5' is not a ratio"),
        ("OTEL_TRACES_SAMPLER_ARG", "nan", r"OTEL_TRACES_SAMPLER_ARG='nan' is not a ratio"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "-1", r"OTEL_BSP_MAX_QUEUE_SIZE='-1' is not a whole number"),
        ("OTEL_BSP_SCHEDULE_DELAY", "x", r"OTEL_BSP_SCHEDULE_DELAY='x' is not a whole number"),
        ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4096", r"BATCH_SIZE='4096' is not at most"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "notaurl", r"ENDPOINT='notaurl' is not an http://"),
        (
            "OTEL_EXPORTER_OTLP_TIMEOUT",
            "abc",
            r"OTEL_EXPORTER_OTLP_TIMEOUT='abc' is not a positive",
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", r"PROTOCOL='grpc' is not http/protobuf"),
    ],
)
def test_a_malformed_otel_variable_is_refused_by_name(
    clean_env: pytest.MonkeyPatch, name: str, value: str, match: str
) -> None:
    """Before, the SDK read each as its default with a log line at most (every run recorded,
    export on although disabled, a gRPC port spoken HTTP to) or raised a bare ValueError."""
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    clean_env.setenv("OTEL_TRACES_SAMPLER", "traceidratio")
    clean_env.setenv(name, value)
    with pytest.raises(ConfigError, match=match):
        from_environment()


def test_a_malformed_content_flag_is_refused(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "maybe")
    with pytest.raises(ConfigError, match=r"CAPTURE_MESSAGE_CONTENT='maybe' is not true or false"):
        OTelExporter(TracerProvider())


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    headers=st.text(st.characters(codec="ascii", exclude_characters="\x00"), max_size=30),
    separator=st.sampled_from(["=", ":", " "]),
)
def test_malformed_headers_are_refused_without_quoting_them(
    clean_env: pytest.MonkeyPatch, headers: str, separator: str
) -> None:
    """Property: OTEL_EXPORTER_OTLP_HEADERS (an API key's place) is sent as name=value items
    or refused with an error that quotes none of it; before, the SDK dropped a malformed list
    and sent spans with no key."""
    headers = f"{headers},api-key{separator}SECRET-4711"
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    clean_env.setenv("OTEL_EXPORTER_OTLP_HEADERS", headers)
    items = [item for item in headers.split(",") if item.strip()]
    well_formed = all("=" in i and i.split("=")[0].strip() for i in items)
    try:
        exporter = from_environment()
    except ConfigError as exc:
        assert not well_formed
        assert "SECRET-4711" not in str(exc) and exc.value is None
    else:
        assert well_formed and isinstance(exporter, OTelExporter)


def _sent(collector: Collector, model: ScriptedModel, tool: Any) -> dict[str, dict[str, Any]]:
    """Each span of two runs sent to ``collector`` in batches, by name."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    made = TracerProvider()
    made.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(collector.url + "/v1/traces")))
    exporter = OTelExporter(made, capture_content=True)
    for _ in range(2):
        run(Agent("a", model, tools=[tool], exporters=[exporter], hooks=Hooks()))
    made.shutdown()
    return {span.name: attributes(span) for _, span in collector.spans()}


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(st.characters(categories=["Cs", "Lu"]), min_size=1, max_size=4))
@example(text="\ud800\udc00\udfff")  # a pair, then a lone one
def test_a_lone_surrogate_from_the_model_loses_no_span(collector: Collector, text: str) -> None:
    """Property: a model (a server) naming itself with a lone surrogate, and a tool result
    holding one, reach the collector with every span of the batch, each surrogate as its
    escape. Before, the span name failed to encode and the SDK dropped the whole batch, other
    runs' spans with it; a content attribute holding one was dropped."""
    collector.requests.clear()

    def echo(city: str) -> str:
        """Echo the city back, broken."""
        return f"{city} {text}"

    steps = [calls(("echo", {"city": "Paris"})), "done"] * 2
    model = ScriptedModel(steps, name=f"model-{text}")
    sent = _sent(collector, model, echo)
    chat = f"chat model-{text}".encode("utf-8", "backslashreplace").decode()
    assert ascii({"invoke_agent a", "execute_tool echo", chat} - set(sent)) == "set()"
    result = sent["execute_tool echo"]["gen_ai.tool.call.result"]
    # as JSON escapes read back: a high and a low surrogate side by side become one character
    assert ascii(json.loads(result)) == ascii(json.loads(json.dumps(f"Paris {text}")))
