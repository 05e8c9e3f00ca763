"""A trace file another writer made, or an attacker edited: named errors or a sound page.

``agentkit view`` reads whatever file it is given. A line whose fields cannot place a span in
its run (its id, its parent's id, its start) is refused with the file and the line; every
other field is shown as whatever it holds, and nothing in the file may end the command with a
traceback or keep it in a loop.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core._span_export import UNRECORDABLE
from agentkit_core.cli import TraceFile
from agentkit_core.cli import read_trace_file
from agentkit_core.cli._viewer import _Views
from agentkit_core.cli._viewer import render_html
from agentkit_core.cli._viewer import views_from_spans
from agentkit_core.plugin import Span
from agentkit_core.plugin import SpanExporter
from agentkit_core.testing import ScriptedModel
from tests.conftest import run_cli
from tests.view_runs import traced_runs

ROOT = Path(__file__).resolve().parent.parent
HEADER = '{"agentkit_trace": 1}\n'


def write(path: Path, *spans: object, raw: str = "") -> Path:
    path.write_text(HEADER + "".join(json.dumps(s) + "\n" for s in spans) + raw)
    return path


RUN = {"name": "run", "span_id": "r", "run_id": "x", "start_ns": 1}


@pytest.mark.parametrize(
    ("lines", "raw", "match"),
    [
        ([{"name": "run"}], "", r"line 2 is not a span: its span_id is None"),
        ([{"name": "run", "span_id": ["r"]}], "", r"line 2 .*span_id is \['r'\]"),
        ([{"name": "run", "span_id": ""}], "", r"line 2 .*span_id is ''"),
        ([RUN, {"name": "turn", "span_id": "r"}], "", r"line 3 .*'r' is the id of .*line 2"),
        ([RUN, {"name": "turn", "span_id": "t", "parent_id": 7}], "", r"line 3 .*parent_id is 7"),
        ([RUN, {"name": "turn", "span_id": "t", "start_ns": "5"}], "", r"line 3 .*start_ns is '5'"),
        ([RUN, {"name": "turn", "span_id": "t", "start_ns": -1}], "", r"start_ns is -1"),
        ([RUN, {"name": "turn", "span_id": "t", "start_ns": 1.5}], "", r"start_ns is 1.5"),
        ([RUN, {"name": "turn", "span_id": "t", "start_ns": True}], "", r"start_ns is True"),
        ([RUN], '{"name": "turn", "span_id": "t", "start_ns": NaN}\n', r"line 3 .*start_ns is nan"),
        (
            [RUN],
            '{"name": "x", "span_id": "t", "a": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
            r"line 3 is not JSON this reader takes \(maximum recursion depth",
        ),
        (
            [RUN],
            '{"name": "x", "span_id": "t", "a": ' + "7" * 5000 + "}\n",
            r"line 3 is not JSON this reader takes \(Exceeds the limit",
        ),
    ],
)
def test_a_span_line_that_cannot_be_placed_is_named(
    tmp_path: Path, lines: list[object], raw: str, match: str
) -> None:
    """Before, these were a KeyError, a TypeError (unhashable id, a str start sorted beside an
    int), a RecursionError or a ValueError out of ``agentkit view``; a duplicate id silently
    replaced a span."""
    path = write(tmp_path / "bad.jsonl", *lines, raw=raw)
    with pytest.raises(ConfigError, match=match) as raised:
        read_trace_file(path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("header", ['{"agentkit_trace": true}', '{"agentkit_trace": 0}'])
def test_a_header_that_is_no_version_is_refused(tmp_path: Path, header: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(header + "\n")
    with pytest.raises(ConfigError, match="not an agentkit trace file"):
        read_trace_file(path)


def test_a_parent_missing_or_in_a_cycle_is_read(tmp_path: Path) -> None:
    """Ids and starts are sound, so the file is read; where the spans belong is the viewer's."""
    path = write(
        tmp_path / "t.jsonl",
        RUN,
        {"name": "turn", "span_id": "a", "parent_id": "b"},
        {"name": "turn", "span_id": "b", "parent_id": "a"},
        {"name": "tool_call", "span_id": "c", "parent_id": "gone"},
    )
    assert [s["span_id"] for s in read_trace_file(path)] == ["a", "b", "c", "r"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
FIELDS = ("name", "span_id", "parent_id", "start_ns", "run_id", "attributes", "payload", "error")


@functools.cache
def _real_lines(directory: Path) -> tuple[str, ...]:
    """The span lines of a real trace (runs with verdicts, errors and a suspension)."""
    path = directory / "real.jsonl"
    asyncio.run(traced_runs(path))
    return tuple(path.read_text().splitlines()[1:])


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_edit_of_a_real_trace_is_read_or_named(tmp_path: Path, data: st.DataObject) -> None:
    """Property: a real trace with one field of one span set to any JSON value (or removed)
    is read, or refused with a ConfigError naming the file and the line; nothing else."""
    spans: list[dict[str, Any]] = [json.loads(line) for line in _real_lines(tmp_path)]
    index = data.draw(st.integers(0, len(spans) - 1))
    field = data.draw(st.sampled_from(FIELDS))
    if data.draw(st.booleans()):
        spans[index].pop(field, None)
    else:
        spans[index][field] = data.draw(JSON)
    path = tmp_path / "edited.jsonl"
    path.write_text(HEADER + "".join(json.dumps(s) + "\n" for s in spans))
    try:
        read = read_trace_file(path)
    except ConfigError as exc:
        assert str(path) in str(exc) and f"line {index + 2} " in str(exc)
    else:
        assert len(read) == len(spans)
        assert all(type(s.get("start_ns", 0)) is int for s in read)


def echo(data: object, note: str = "") -> str:
    """Echo nothing back."""
    return "ok"


def nested(depth: int) -> object:
    return json.loads("[" * depth + "]" * depth)


async def deep_run(path: Path, depth: int) -> None:
    arguments = json.dumps({"data": nested(depth), "note": "kept"})
    steps = [Message.assistant("", tool_calls=[ToolCall("c1", "echo", arguments)]), "all done"]
    with TraceFile(path) as trace:
        await Agent("a", ScriptedModel(steps), tools=[echo], exporters=[trace]).run("go")


def test_tool_arguments_nested_past_the_encoder_keep_the_trace_whole(tmp_path: Path) -> None:
    """A model's arguments nested 300 deep made the tool call's span unencodable: the trace
    file was detached from the run and lost its tool call, its turns and the run itself."""
    path = tmp_path / "deep.jsonl"
    asyncio.run(deep_run(path, 300))
    spans = read_trace_file(path)
    assert sorted(s["name"] for s in spans) == sorted(
        ["run", "turn", "turn", "model_call", "model_call", "tool_call"]
    )
    tool = next(s for s in spans if s["name"] == "tool_call")
    assert tool["payload"]["arguments"] == {"data": [UNRECORDABLE], "note": "kept"}
    [view] = views_from_spans(spans)
    assert view["status"] == "done" and view["turns"][0]["tools"][0]["result"] == "ok"
    assert UNRECORDABLE in render_html([view], "deep")


@settings(max_examples=12, deadline=None)
@given(depth=st.integers(1, 700))
def test_any_nesting_of_arguments_is_traced_whole(depth: int) -> None:
    """Property: however deep the arguments, every span of the run reaches the trace file."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "t.jsonl"
        asyncio.run(deep_run(path, depth))
        names = [s["name"] for s in read_trace_file(path)]
    assert names.count("tool_call") == 1 and names.count("run") == 1


def test_an_attribute_nested_past_the_encoder_is_shown_as_not_recorded(tmp_path: Path) -> None:
    """A file's attribute nested 300 deep was a ValueError out of the viewer's export rule."""
    tool = {
        "name": "tool_call",
        "span_id": "t",
        "parent_id": "r",
        "attributes": {"call_id": "c", "tool": "echo", "extra": nested(300)},
    }
    spans = read_trace_file(write(tmp_path / "t.jsonl", RUN, tool))
    page = render_html(views_from_spans(spans), "deep")
    assert "tool echo" in page


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_value_in_a_real_traces_attributes_or_payload_is_shown(
    tmp_path: Path, data: st.DataObject
) -> None:
    """Property: a real trace whose spans' attributes, payloads, errors and durations hold any
    JSON values is read and rendered as a page: a turn number of text, NaN or infinity, a list
    as a tool call id, made the viewer raise."""
    spans: list[dict[str, Any]] = [json.loads(line) for line in _real_lines(tmp_path)]
    for _ in range(data.draw(st.integers(1, 4))):
        span = spans[data.draw(st.integers(0, len(spans) - 1))]
        where = data.draw(st.sampled_from(["attributes", "payload", "span"]))
        holder = span if where == "span" else span.get(where)
        if not isinstance(holder, dict):
            continue
        keys = sorted(set(holder) - {"name", "span_id", "parent_id", "start_ns"})
        key = data.draw(st.sampled_from(keys)) if keys else "x"
        if isinstance(holder.get(key), list) and holder[key] and data.draw(st.booleans()):
            holder[key][data.draw(st.integers(0, len(holder[key]) - 1))] = data.draw(JSON)
        else:
            holder[key] = data.draw(JSON)
    path = tmp_path / "edited.jsonl"
    path.write_text(HEADER + "".join(json.dumps(s) + "\n" for s in spans))
    views = views_from_spans(read_trace_file(path))
    page = render_html(views, "edited")
    assert page.endswith("</html>") and "<script>alert" not in page


@pytest.mark.parametrize(
    ("attributes", "shown"),
    [
        ({"turn": "abc"}, "Before the first turn"),
        ({"turn": float("nan")}, "Before the first turn"),
        ({"turn": float("inf")}, "Before the first turn"),
        ({"turn": [2]}, "Before the first turn"),
        ({"turn": "3"}, "Turn 3"),
        ({"turn": 4.0}, "Turn 4"),
    ],
)
def test_a_turn_number_that_is_no_count_is_shown_as_none(
    tmp_path: Path, attributes: dict[str, object], shown: str
) -> None:
    """Before, text, NaN and infinity were a ValueError or an OverflowError out of ``int()``."""
    turn = {"name": "turn", "span_id": "t", "parent_id": "r", "attributes": attributes}
    tool = {"name": "tool_call", "span_id": "c", "parent_id": "t", "attributes": {"tool": "x"}}
    page = render_html(
        views_from_spans(read_trace_file(write(tmp_path / "t.jsonl", RUN, turn, tool))), "t"
    )
    assert shown in page and "tool x" in page


def test_a_tool_call_id_of_any_json_is_a_row(tmp_path: Path) -> None:
    """A list or an object as a call id was a TypeError (unhashable) out of the viewer."""
    model = {
        "name": "model_call",
        "span_id": "m",
        "parent_id": "r",
        "attributes": {"tool_call_ids": [["a"], {"b": 1}], "tool_call_names": ["one", "two"]},
    }
    run = {**RUN, "attributes": {"pending": [["a"]]}}
    [view] = views_from_spans(read_trace_file(write(tmp_path / "t.jsonl", run, model)))
    rows = view["turns"][0]["tools"]
    assert [r["name"] for r in rows] == ["one", "two"]
    assert rows[0]["result"] == "(pending: waiting for a person's approval)"
    assert "tool one" in render_html([view], "t")


def test_a_duration_that_is_no_number_shows_as_unknown(tmp_path: Path) -> None:
    tool = {"name": "tool_call", "span_id": "c", "parent_id": "r", "duration_s": float("nan")}
    run = {**RUN, "duration_s": float("inf")}
    page = render_html(
        views_from_spans(read_trace_file(write(tmp_path / "t.jsonl", run, tool))), "t"
    )
    assert "nan ms" not in page and "inf ms" not in page


def test_a_trace_file_on_a_full_disk_is_named_at_the_start() -> None:
    """Before, the header's write raised a bare OSError: 'unexpected' out of agentkit run."""
    with pytest.raises(ConfigError, match=r"cannot write the trace file '/dev/full': No space"):
        TraceFile("/dev/full")


def _run_with_file_size_limit(trace: Path, limit: int) -> subprocess.CompletedProcess[str]:
    """``agentkit run --trace`` in a process that may write no file past ``limit`` bytes."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    command = [sys.executable, "-m", "agentkit_core", "run", "What is 6*7?", "--model", "test"]
    command += ["--tools", "examples.tools:TOOLS", "-q", "--trace", str(trace)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTKIT_", "OTEL_"))}
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
        preexec_fn=limited,
    )


@settings(max_examples=5, deadline=None)
@given(limit=st.integers(30, 6000))
def test_a_disk_that_fills_mid_run_ends_the_trace_not_the_run(limit: int) -> None:
    """Property: wherever the disk fills, the run answers and exits 0, and the trace holds
    what it wrote. Before, the line the disk refused stayed buffered and closing the file at
    the end raised it again: a finished run exited 2 with 'unexpected OSError'."""
    with tempfile.TemporaryDirectory() as directory:
        trace = Path(directory) / "t.jsonl"
        proc = _run_with_file_size_limit(trace, limit)
        assert proc.returncode == 0, proc.stderr
        assert "TestModel answer" in proc.stdout
        assert f"cannot write the trace file {str(trace)!r}: File too large" in proc.stderr
        assert all(s["name"] != "run" for s in read_trace_file(trace))


def broken_text(value: str) -> str:
    """A tool whose text holds lone surrogates (a broken decode of a page, say)."""
    return f"half {value} \ud800 pair"


@settings(max_examples=15, deadline=None)
@given(text=st.text(st.characters(categories=["Cs", "Ll"]), max_size=6))
@example(text="\ud800\udc00\udfff")  # a pair, then a lone one
def test_a_lone_surrogate_in_a_run_is_traced_and_viewed(text: str) -> None:
    """Property: whatever lone surrogates a tool's result and the answer hold, every span
    reaches the trace file and the page is written, each surrogate shown as its escape.
    Before, strict UTF-8 refused the line: the run detached the trace file and lost the rest
    of it; and a file holding one (as a JSON escape) made agentkit view raise."""
    steps = [
        Message.assistant(
            "", tool_calls=[ToolCall("c1", "broken_text", json.dumps({"value": text}))]
        ),
        f"done {text}",
    ]
    with tempfile.TemporaryDirectory() as directory:
        trace, page = Path(directory) / "t.jsonl", Path(directory) / "t.html"
        with TraceFile(trace) as exporter:
            agent = Agent("a", ScriptedModel(steps), tools=[broken_text], exporters=[exporter])
            asyncio.run(agent.run(text))
        spans = read_trace_file(trace)
        tool = next(s for s in spans if s["name"] == "tool_call")
        # as JSON escapes read back: a high and a low surrogate side by side (two code points)
        # become the one character they encode; every lone one stays itself
        expected = json.loads(json.dumps(broken_text(text)))
        assert ascii(tool["payload"]["result"]) == ascii(expected)
        assert [s["name"] for s in spans].count("run") == 1
        proc = run_cli("view", str(trace), "--out", str(page), "--no-open", cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        assert "half" in page.read_text(encoding="utf-8") and "\\ud800 pair" in page.read_text()


def test_a_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(HEADER.encode() + b'{"name": "run", "span_id": "\xff"}\n')
    with pytest.raises(ConfigError, match=r"line 2 is not UTF-8 \(byte 0xff\)"):
        read_trace_file(path)


def test_a_last_line_cut_mid_character_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    whole = json.dumps(RUN) + "\n"
    path.write_bytes((HEADER + whole).encode() + '{"name": "turn", "x": "é'.encode()[:-1])
    assert read_trace_file(path) == [RUN]


class Unsayable(Exception):
    """An exception whose text cannot be made."""

    def __str__(self) -> str:
        raise RuntimeError("no text")


class BrokenThrough(SpanExporter):
    """An exporter broken all the way: it raises, and so does its repr and its error's str."""

    def __init__(self, method: str) -> None:
        self.method = method

    def on_start(self, span: Span) -> None:
        if self.method == "on_start":
            raise Unsayable

    def on_end(self, span: Span) -> None:
        if self.method == "on_end":
            raise Unsayable

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize("method", ["on_start", "on_end"])
def test_an_exporter_broken_down_to_its_repr_is_detached_and_the_run_goes_on(
    method: str,
) -> None:
    """Before, the handler that detaches a raising exporter raised itself (its message read
    the exporter's repr and the error's str), and the run failed."""
    agent = Agent("a", ScriptedModel(["done"]), exporters=[BrokenThrough(method)])
    ctx = agent.new_context()
    result = asyncio.run(agent.run("go", ctx=ctx))
    assert result.output == "done"
    [line] = ctx.trace.errors
    assert line.startswith(
        f"span exporter <BrokenThrough> raised Unsayable: <Unsayable> in {method}"
    )
    assert line.endswith(f"detached from run {ctx.run_id!r}")


class BrokenAt(BrokenThrough):
    """Raises at its ``at``-th call of ``method``; its repr may work or not."""

    def __init__(self, method: str, at: int, sayable: bool) -> None:
        super().__init__("")
        self.broken_method, self.at, self.sayable, self.seen = method, at, sayable, 0

    def _call(self, method: str) -> None:
        if method == self.broken_method:
            self.seen += 1
            if self.seen == self.at:
                raise Unsayable if not self.sayable else RuntimeError("down")

    def on_start(self, span: Span) -> None:
        self._call("on_start")

    def on_end(self, span: Span) -> None:
        self._call("on_end")

    def __repr__(self) -> str:
        if self.sayable:
            return "<BrokenAt>"
        raise RuntimeError("no repr")


@settings(max_examples=30, deadline=None)
@given(
    method=st.sampled_from(["on_start", "on_end"]),
    at=st.integers(1, 8),
    sayable=st.booleans(),
)
def test_an_exporter_broken_anywhere_never_changes_the_run(
    method: str, at: int, sayable: bool
) -> None:
    """Property: wherever an exporter breaks, however broken, the run answers as it would."""
    steps = [Message.assistant("", tool_calls=[ToolCall("c1", "echo", '{"data": 1}')]), "done"]
    agent = Agent(
        "a", ScriptedModel(steps), tools=[echo], exporters=[BrokenAt(method, at, sayable)]
    )
    result = asyncio.run(agent.run("go"))
    assert result.output == "done" and result.status == "done"


def test_a_long_chain_of_spans_is_viewed_in_linear_time(tmp_path: Path) -> None:
    """Each span under the one before, 30,000 deep: every span walked up the whole chain made
    8,000 take a minute and 30,000 hours; now it takes well under a second (bound: 20 s)."""
    chain = [RUN] + [
        {"name": "fold", "span_id": f"s{i}", "parent_id": "r" if i == 1 else f"s{i - 1}"}
        for i in range(1, 30_000)
    ]
    spans = read_trace_file(write(tmp_path / "chain.jsonl", *chain))
    began = time.monotonic()
    [view] = views_from_spans(spans)
    render_html([view], "chain")
    assert time.monotonic() - began < 20
    assert len(view["turns"][0]["folds"]) == 29_999


NAMES = st.sampled_from(["run", "turn", "fold", "tool_call"])


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(st.tuples(NAMES, st.integers(-1, 12)), min_size=1, max_size=12))
def test_where_a_span_belongs_is_what_walking_up_its_parents_finds(
    shape: list[tuple[str, int]],
) -> None:
    """Property: with parents missing, in cycles or chained, the run and the turn each span is
    placed under are the ones a plain walk up its parents finds (the walk the viewer made
    before it kept what each walk found)."""
    spans: list[dict[str, Any]] = [
        {"name": name, "span_id": f"s{i}", "parent_id": f"s{parent}" if parent >= 0 else None}
        for i, (name, parent) in enumerate(shape)
    ]
    by_id = {s["span_id"]: s for s in spans}

    def walk(node: dict[str, Any] | None, wanted: str) -> dict[str, Any] | None:
        seen: set[str] = set()
        while node is not None and node["span_id"] not in seen:
            if node["name"] == wanted:
                return node
            if node["name"] == "run":
                return None
            seen.add(node["span_id"])
            node = by_id.get(node["parent_id"])
        return None

    views = _Views(spans)
    for span in spans:
        run = walk(span, "run")
        assert views.run_of(span) is (None if run is None else views.runs[run["span_id"]])
        turn = walk(by_id.get(span["parent_id"]), "turn")
        placed = views.turn_for(span, views.runs[run["span_id"]]) if run else None
        if run is not None:
            expected = (
                views.turns.get(turn["span_id"]) if turn else views.runs[run["span_id"]].prelude
            )
            assert placed is expected, (span, turn)
