"""The span-exporter seam: a run's spans (run, turn, calls, verdicts, folds), their tree, taint,
broken exporters, the trace file, and the exporters plugins offer."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginError
from agentkit_core import PluginManager
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import Trace
from agentkit_core import hookimpl
from agentkit_core.cli import TraceFile
from agentkit_core.cli import read_trace_file
from agentkit_core.plugin import Span
from agentkit_core.plugin import SpanExporter
from agentkit_core.plugin import span_exporters
from agentkit_core.testing import ScriptedModel
from tests.view_runs import HOOKS
from tests.view_runs import TOOLS
from tests.view_runs import suspending_script


class Recorder(SpanExporter):
    """Keeps every start and end it is told of, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Span]] = []

    def on_start(self, span: Span) -> None:
        self.events.append(("start", span))

    def on_end(self, span: Span) -> None:
        self.events.append(("end", span))


def echo(text: str) -> str:
    """Echo the text."""
    return text


def calls(*texts: str) -> Message:
    return Message.assistant(
        "", [ToolCall(f"c{i}", "echo", json.dumps({"text": t})) for i, t in enumerate(texts)]
    )


def test_a_run_tells_its_exporters_of_every_span_in_a_tree() -> None:
    recorder = Recorder()
    model = ScriptedModel([calls("a", "b"), "done"])
    agent = Agent("a", model, tools=[echo], hooks=HOOKS, exporters=[recorder])
    result = asyncio.run(agent.run("go"))
    started = [s.name for kind, s in recorder.events if kind == "start"]
    # the hooks had no opinion on either call: no verdict span, as in a run without hooks
    assert started == ["run", "turn", "model_call", "tool_call", "tool_call", "turn", "model_call"]
    ended = {s.span_id: s for kind, s in recorder.events if kind == "end"}
    assert len(ended) == len(started)  # every span ended, once
    run = next(s for s in ended.values() if s.name == "run")
    assert run.attributes["status"] == "done" and run.payload["output"] == "done"
    turns = [s for s in ended.values() if s.name == "turn"]
    assert [t.attributes["turn"] for t in turns] == [1, 2]
    assert all(t.parent_id == run.span_id for t in turns)
    tool = next(s for s in ended.values() if s.name == "tool_call")
    assert tool.parent_id == turns[0].span_id and tool.payload["arguments"] == {"text": "a"}
    assert tool.payload["result"] == "a" and tool.attributes["result_chars"] == 1
    model_call = next(s for s in ended.values() if s.name == "model_call")
    assert model_call.attributes["tool_call_ids"] == ["c0", "c1"]
    assert all(s.run_id == result.run_id for s in ended.values())
    # the second turn ended before the run did, and each turn ends before the next starts
    assert turns[0].end_ns is not None and turns[0].end_ns <= turns[1].start_ns
    assert turns[1].end_ns is not None and run.end_ns is not None
    assert turns[1].end_ns <= run.end_ns


def test_verdicts_say_the_decision_and_who_made_it() -> None:
    recorder = Recorder()
    agent = Agent(
        "bank", ScriptedModel(suspending_script()), tools=TOOLS, hooks=HOOKS, exporters=[recorder]
    )
    result = asyncio.run(agent.run("go"))
    assert result.status == "suspended"
    verdicts = {
        s.attributes["tool"]: s.attributes
        for kind, s in recorder.events
        if kind == "end" and s.name == "verdict"
    }
    assert verdicts["delete"]["decision"] == "deny"
    assert verdicts["delete"]["source"] == "policy"
    assert verdicts["transfer"]["decision"] == "ask"
    assert "lookup" not in verdicts  # allowed with no opinion from anyone: nothing to trace
    run = next(s for kind, s in recorder.events if kind == "end" and s.name == "run")
    assert run.attributes["status"] == "suspended"
    assert run.attributes["pending"] == ["t3c0"]
    assert "a person approves transfers" in run.attributes["stop_reason"]


def test_a_verdict_span_covers_the_deciding_and_sits_under_the_turn() -> None:
    async def slow_deny(ctx: Any, call: ToolCall) -> ToolDecision:
        await asyncio.sleep(0.05)
        return ToolDecision.deny("not today")

    recorder = Recorder()
    hooks = Hooks.of("gate", before_tool_call=slow_deny)
    agent = Agent(
        "a", ScriptedModel([calls("x"), "done"]), tools=[echo], hooks=hooks, exporters=[recorder]
    )
    asyncio.run(agent.run("go"))
    names = [(kind, s.name) for kind, s in recorder.events]
    at = names.index(("start", "verdict"))
    assert names[at + 1] == ("end", "verdict")  # told of both once the decision is known
    verdict = recorder.events[at][1]
    turn = next(s for kind, s in recorder.events if s.name == "turn")
    model = next(s for kind, s in recorder.events if s.name == "model_call")
    assert verdict.parent_id == turn.span_id
    assert verdict.attributes == {
        "tool": "echo",
        "call_id": "c0",
        "decision": "deny",
        "source": "gate",
        "reason": "not today",
        "rule": "",
    }
    # its start is when deciding began, after the model call ended, not when it was recorded
    assert verdict.duration is not None and verdict.duration >= 0.05
    assert model.end_ns is not None and verdict.end_ns is not None
    assert model.end_ns <= verdict.start_ns <= verdict.end_ns - 50_000_000


def test_a_hook_that_raises_leaves_a_verdict_span_with_the_error() -> None:
    def broken(ctx: Any, call: ToolCall) -> None:
        raise RuntimeError("the gate fell off")

    recorder = Recorder()
    hooks = Hooks.of("gate", before_tool_call=broken)
    agent = Agent(
        "a", ScriptedModel([calls("x"), "done"]), tools=[echo], hooks=hooks, exporters=[recorder]
    )
    with pytest.raises(PluginError):
        asyncio.run(agent.run("go"))
    [verdict] = [s for kind, s in recorder.events if kind == "end" and s.name == "verdict"]
    assert verdict.attributes == {"tool": "echo", "call_id": "c0"}
    assert verdict.error_type == "HookError" and "the gate fell off" in (verdict.error or "")
    assert verdict.error_plugin == "gate"


def test_a_recorded_span_is_backdated_to_its_start() -> None:
    recorder = Recorder()
    trace = Trace(run_id="r", exporters=[recorder])
    since = time.perf_counter()
    time.sleep(0.02)
    span = trace.record("check", {"n": 1}, since)
    assert span.start == since and span.end is not None and span.end - since >= 0.02
    assert span.end_ns is not None and span.end_ns - span.start_ns >= 20_000_000
    assert [kind for kind, _ in recorder.events] == ["start", "end"]
    assert trace.spans == [span] and span.error is None


def test_an_error_is_on_the_span_with_the_plugin_that_raised_it() -> None:
    def broken(request: Any) -> Any:
        raise PluginError("acme's model broke", plugin="acme")

    recorder = Recorder()
    agent = Agent("a", ScriptedModel([broken]), hooks=Hooks(), exporters=[recorder])
    with pytest.raises(PluginError):
        asyncio.run(agent.run("go"))
    ended = {s.name: s for kind, s in recorder.events if kind == "end"}
    assert ended["model_call"].error == "PluginError: acme's model broke"
    assert ended["model_call"].error_plugin == "acme"
    assert ended["turn"].error_type == "PluginError" and ended["run"].error is not None


class Raising(SpanExporter):
    def __init__(self, method: str) -> None:
        self.method = method
        self.calls = 0

    def on_start(self, span: Span) -> None:
        self.calls += 1
        if self.method == "on_start":
            raise RuntimeError("collector unreachable")

    def on_end(self, span: Span) -> None:
        self.calls += 1
        if self.method == "on_end":
            raise RuntimeError("collector unreachable")


@pytest.mark.parametrize("method", ["on_start", "on_end"])
def test_a_broken_exporter_is_detached_and_the_run_goes_on(
    method: str, caplog: pytest.LogCaptureFixture
) -> None:
    broken, recorder = Raising(method), Recorder()
    agent = Agent(
        "a", ScriptedModel([calls("x"), "done"]), tools=[echo], exporters=[broken, recorder]
    )
    ctx = agent.new_context()
    with caplog.at_level(logging.WARNING, logger="agentkit.tracing"):
        result = asyncio.run(agent.run("go", ctx=ctx))
    assert result.output == "done"
    # on_start raises on the run's first span; on_end on the model call's, after three starts
    assert broken.calls == (1 if method == "on_start" else 4)
    assert len(ctx.trace.errors) == 1 and "collector unreachable" in ctx.trace.errors[0]
    assert "detached" in caplog.text and "Raising" in caplog.text
    assert sum(1 for kind, _ in recorder.events if kind == "end") == len(ctx.trace.spans)


class SampledOut(Recorder):
    """Declines every run: False from the run span's on_start (a sampler's "not this run")."""

    def on_start(self, span: Span) -> bool:
        super().on_start(span)
        return span.name != "run"


def test_an_exporter_that_declines_a_run_hears_nothing_more_of_it() -> None:
    declined, recorder = SampledOut(), Recorder()
    agent = Agent(
        "a", ScriptedModel([calls("x"), "done"]), tools=[echo], exporters=[declined, recorder]
    )
    ctx = agent.new_context()
    assert asyncio.run(agent.run("go", ctx=ctx)).output == "done"
    assert [(kind, s.name) for kind, s in declined.events] == [("start", "run")]
    assert ctx.trace.errors == [] and ctx.trace.exporters == [recorder]
    assert sum(1 for kind, _ in recorder.events if kind == "end") == len(ctx.trace.spans)


def test_exporters_must_be_span_exporters() -> None:
    with pytest.raises(
        ConfigError, match=r"exporters= takes agentkit_core.plugin.SpanExporter.*print"
    ):
        Agent("a", "test", exporters=[print])  # type: ignore[list-item]
    one = Recorder()
    assert Agent("a", "test", exporters=one).exporters == [one]  # type: ignore[arg-type]


class OffersExporters:
    AGENTKIT_NAME = "offers"

    def __init__(self, value: Any) -> None:
        self.value = value

    @hookimpl
    def agentkit_register_span_exporters(self, register: Any) -> None:
        register("mine", lambda: self.value)


def test_installed_exporters_are_every_agents_default() -> None:
    recorder = Recorder()
    manager = PluginManager(entry_points=False, plugins=[OffersExporters(recorder)])
    assert span_exporters(manager=manager) == [recorder]
    agent = Agent("a", ScriptedModel(["hi"]), manager=manager)
    asyncio.run(agent.run("go"))
    assert [s.name for kind, s in recorder.events if kind == "end"][-1] == "run"
    # one that is not configured offers None and is left out
    off = PluginManager(entry_points=False, plugins=[OffersExporters(None)])
    assert span_exporters(manager=off) == []
    # one that builds something else is the plugin's fault, named
    bad = PluginManager(entry_points=False, plugins=[OffersExporters("nope")])
    with pytest.raises(PluginError, match=r"span exporter 'mine' from plugin 'offers'.*str"):
        span_exporters(manager=bad)


SECRET = "hunter2-one-time-code"


async def ask_code(ctx: RunContext) -> str:
    """Ask the person for the one-time code."""
    return str(await ctx.elicit("One-time code?", secret=True))


def test_spans_after_a_secret_answer_are_tainted_and_lose_their_payload(tmp_path: Path) -> None:
    async def person(question: str, schema: Any, secret: bool) -> str:
        return SECRET

    model = ScriptedModel(
        [
            calls("before"),
            Message.assistant("", [ToolCall("k", "ask_code", "{}")]),
            calls(SECRET),
            "ok",
        ]
    )
    with TraceFile(tmp_path / "t.jsonl") as exporter:
        agent = Agent("a", model, tools=[echo, ask_code], elicitor=person, exporters=[exporter])
        asyncio.run(agent.run("go"))
    text = (tmp_path / "t.jsonl").read_text()
    assert SECRET not in text and "before" in text
    spans = read_trace_file(tmp_path / "t.jsonl")
    asked = next(
        s for s in spans if s["name"] == "tool_call" and s["attributes"]["tool"] == "ask_code"
    )
    assert asked["tainted"] and asked["payload"] is None  # it ended after the answer
    elicit = next(s for s in spans if s["name"] == "elicit")
    later = [s for s in spans if s["start_ns"] > elicit["end_ns"]]
    assert later and all(s["tainted"] and s["payload"] is None for s in later)


@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(st.lists(st.text(max_size=8), min_size=1, max_size=3), max_size=5),
    answer=st.text(min_size=1, max_size=20).filter(str.strip),
)
def test_the_span_tree_is_well_formed_for_any_run(turns: list[list[str]], answer: str) -> None:
    """Property: every span ends once, inside its parent, and turns follow one another."""
    recorder = Recorder()
    model = ScriptedModel([*(calls(*texts) for texts in turns), answer])
    agent = Agent(
        "p", model, tools=[echo], hooks=Hooks(), exporters=[recorder], max_turns=len(turns) + 1
    )
    asyncio.run(agent.run("go"))
    starts = [s for kind, s in recorder.events if kind == "start"]
    ends = [s for kind, s in recorder.events if kind == "end"]
    assert sorted(s.span_id for s in starts) == sorted(s.span_id for s in ends)
    by_id = {s.span_id: s for s in ends}
    for span in ends:
        assert span.end_ns is not None and span.start_ns <= span.end_ns
        parent = by_id.get(span.parent_id or "")
        if parent is not None:
            assert parent.end_ns is not None
            assert parent.start_ns <= span.start_ns and span.end_ns <= parent.end_ns
    turn_spans = [s for s in ends if s.name == "turn"]
    assert [t.attributes["turn"] for t in sorted(turn_spans, key=lambda t: t.start_ns)] == list(
        range(1, len(turns) + 2)
    )
    assert sum(1 for s in ends if s.name == "tool_call") == sum(map(len, turns))


def test_a_step_outside_any_span_is_detached() -> None:
    trace = Trace(run_id="r")
    recorder = Recorder()
    trace.attach([recorder, recorder])
    assert trace.exporters == [recorder]
    detached = trace.step("turn", turn=1)
    assert detached.name == "turn" and recorder.events == []
    with trace.span("outer"):
        trace.step("turn", turn=1)
        trace.step("turn", turn=2)
    names = [(kind, s.name, s.attributes.get("turn")) for kind, s in recorder.events]
    assert names == [
        ("start", "outer", None),
        ("start", "turn", 1),
        ("end", "turn", 1),
        ("start", "turn", 2),
        ("end", "turn", 2),
        ("end", "outer", None),
    ]


def test_span_ids_are_unique_hex_and_a_forked_child_draws_its_own() -> None:
    trace = Trace(run_id="r")
    ids = [trace.open(f"s{i}").span_id for i in range(2000)]  # several batches drawn ahead
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.close(read)
        child = [Trace().open("c").span_id for _ in range(300)]
        os.write(write, json.dumps(child).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child_ids = json.loads(pipe.read())
    os.waitpid(pid, 0)
    later = [trace.open("s").span_id for _ in range(300)]
    assert len(child_ids) == 300 and not set(child_ids) & set(later)


# ---------------------------------------------------------------------- the trace file


def test_a_trace_file_round_trips_and_orders_spans_by_start(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with TraceFile(path) as exporter:
        asyncio.run(
            Agent("a", ScriptedModel([calls("x"), "done"]), tools=[echo], exporters=[exporter]).run(
                "go"
            )
        )
    spans = read_trace_file(path)
    assert spans[0]["name"] == "run"
    assert [s["start_ns"] for s in spans] == sorted(s["start_ns"] for s in spans)
    tool = next(s for s in spans if s["name"] == "tool_call")
    assert tool["payload"] == {"arguments": {"text": "x"}, "result": "x"}


@settings(max_examples=20, deadline=None)
@given(turns=st.lists(st.lists(st.text(max_size=8), min_size=1, max_size=3), max_size=6))
def test_a_trace_file_writes_each_request_as_what_is_new_since_the_last(
    turns: list[list[str]], tmp_path_factory: Any
) -> None:
    """Property: the requests rebuilt from the file's deltas are the ones the model received,
    and no line repeats the transcript (the file grows with the turns, not their square)."""
    path = tmp_path_factory.mktemp("t") / "run.jsonl"
    model = ScriptedModel([*(calls(*texts) for texts in turns), "done"])
    with TraceFile(path) as exporter:
        agent = Agent(
            "a",
            model,
            tools=[echo],
            hooks=Hooks(),
            exporters=[exporter],
            max_turns=len(turns) + 1,
        )
        asyncio.run(agent.run("go"))
    rebuilt: list[Any] = []
    requests = []
    for span in read_trace_file(path):
        if span["name"] == "model_call":
            payload = span["payload"]
            rebuilt = rebuilt[: payload["request_prefix"]] + payload["request"]
            requests.append([(m["role"], m["content"]) for m in rebuilt])
    assert requests == [[(m.role, m.content) for m in r.messages] for r in model.requests]
    deltas = [s["payload"]["request"] for s in read_trace_file(path) if s["name"] == "model_call"]
    assert all(len(d) <= 4 for d in deltas[1:])  # the calls' results and the answer only


def test_a_trace_file_without_content_keeps_no_payload(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with TraceFile(path, content=False) as exporter:
        asyncio.run(Agent("a", ScriptedModel(["done"]), exporters=[exporter]).run("secret task"))
    assert "secret task" not in path.read_text()
    assert all("payload" not in s for s in read_trace_file(path))


def test_a_trace_cut_short_by_a_killed_writer_keeps_what_it_finished(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with TraceFile(path) as exporter:
        asyncio.run(Agent("a", ScriptedModel(["done"]), exporters=[exporter]).run("go"))
    whole = read_trace_file(path)
    path.write_text(path.read_text() + '{"name": "tool_ca')
    assert read_trace_file(path) == whole


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", r"is empty"),
        ('{"name": "run"}\n', r"not an agentkit trace file"),
        ('{"agentkit_trace": 99}\n', r"format 99, newer"),
        ('{"agentkit_trace": 1}\nnot json\n{"name": "run"}\n', r"line 2 is not JSON"),
        ('{"agentkit_trace": 1}\n[1, 2]\n', r"line 2 is not a span"),
    ],
)
def test_a_file_that_is_not_a_trace_is_named(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        read_trace_file(path)


def test_an_unwritable_trace_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot write the trace file .*missing"):
        TraceFile(tmp_path / "missing" / "run.jsonl")
