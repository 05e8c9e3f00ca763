"""The run viewer's data and page: built from real runs' trace files and checkpoints."""

from __future__ import annotations

import asyncio
import gc
import html
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Checkpointer
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core.cli import TraceFile
from agentkit_core.cli import read_trace_file
from agentkit_core.cli._viewer import render_html
from agentkit_core.cli._viewer import view_from_checkpoint
from agentkit_core.cli._viewer import views_from_spans
from agentkit_core.testing import ScriptedModel
from tests.view_runs import HOOKS
from tests.view_runs import TOOLS
from tests.view_runs import calls
from tests.view_runs import suspending_script
from tests.view_runs import traced_runs


def views(tmp_path: Path) -> list[dict[str, Any]]:
    trace = tmp_path / "runs.jsonl"
    asyncio.run(traced_runs(trace))
    return views_from_spans(read_trace_file(trace))


def test_a_trace_gives_each_run_its_turns_calls_verdicts_and_pending(tmp_path: Path) -> None:
    bank, reader = views(tmp_path)
    assert bank["agent"] == "bank" and bank["status"] == "suspended"
    assert "a person approves transfers" in bank["stop_reason"]
    assert [c["id"] for c in bank["pending"]] == ["t3c0"]
    assert bank["pending"][0]["arguments"] == {"amount": 5}
    assert [t["n"] for t in bank["turns"]] == [1, 2, 3]
    assert all(t["duration_s"] is not None for t in bank["turns"])
    rows = {row["name"]: row for turn in bank["turns"] for row in turn["tools"]}
    assert rows["lookup"]["result"] == "account of ann" and rows["lookup"]["duration_s"] >= 0
    assert rows["lookup"]["verdict"] is None  # no one had an opinion: no verdict span
    assert rows["delete"]["verdict"] == "deny by policy: nothing is deleted"
    assert rows["delete"]["is_error"] and "denied by policy" in rows["delete"]["result"]
    assert rows["delete"]["arguments"] == {"path": "/etc/passwd"}  # from the model's answer
    assert rows["boom"]["is_error"] and "the disk is on fire" in rows["boom"]["result"]
    assert rows["transfer"]["verdict"].startswith("ask by policy")
    assert "waiting" in rows["transfer"]["result"]
    call = bank["turns"][0]["model_calls"][0]
    assert call["model"] == "scripted" and call["latency_s"] is not None
    assert call["input_tokens"] > 0 and call["output_tokens"] > 0
    assert bank["usage"]["requests"] == 3
    # the folding run: the fold, what it dropped, and the summary call made for it
    fold = reader["turns"][0]["folds"][0]
    assert fold["messages"] > 0 and fold["tokens_after"] < fold["tokens_before"]
    assert fold["folded"][0].startswith("user: question 0")
    assert "the story so far" in fold["summary"]
    assert reader["turns"][0]["model_calls"][0]["under"] == "fold"
    assert reader["status"] == "done" and reader["output"] == "all done"


def test_the_page_shows_every_turn_and_call_escaped_and_self_contained(tmp_path: Path) -> None:
    found = views(tmp_path)
    page = render_html(found, "runs")
    assert page.count('<section class="turn') == sum(len(v["turns"]) for v in found)
    for view in found:
        for turn in view["turns"]:
            for row in turn["tools"]:
                assert f'data-call-id="{row["id"]}"' in page
    # a payload is text, never markup
    assert "<script>alert(1)</script>" not in page
    assert html.escape("<script>alert(1)</script>") in page
    # nothing is fetched: no URL attribute, and the page forbids every fetch
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "default-src 'none'" in page
    # a large result starts collapsed; the search box is there
    assert re.search(r"<details class=\"result\"><summary>result \(2\d{3} chars\)", page)
    assert 'id="search"' in page or "id='search'" in page


def test_a_checkpointed_run_is_viewed_from_its_store(tmp_path: Path, pm) -> None:
    from agentkit_core.plugin import open_checkpoint_store

    async def go() -> dict[str, Any]:
        port = await open_checkpoint_store(f"sqlite:///{tmp_path / 'runs.db'}", manager=pm)
        async with Checkpointer(port) as checkpointer:
            agent = Agent(
                "bank",
                ScriptedModel(suspending_script()),
                tools=TOOLS,
                hooks=HOOKS,
                checkpointer=checkpointer,
                exporters=[],
            )
            result = await agent.run("check ann's account")
            saved = await checkpointer.resume(result.run_id, include_terminal=True)
            versions = await checkpointer.list_versions(result.run_id)
            return view_from_checkpoint(saved, len(versions))

    view = asyncio.run(go())
    assert view["status"] == "suspended" and view["agent"] == "bank"
    assert view["task"] == "check ann's account"
    assert [t["n"] for t in view["turns"]] == [1, 2, 3]
    rows = {row["name"]: row for turn in view["turns"] for row in turn["tools"]}
    assert rows["lookup"]["result"] == "account of ann"
    assert rows["boom"]["is_error"]
    assert [c["name"] for c in view["pending"]] == ["transfer"]
    assert "waiting" in rows["transfer"]["result"]
    assert "checkpoint v" in view["source"]
    page = render_html([view], "bank")
    assert "pending <b>transfer</b>" in page


def test_a_run_killed_mid_turn_still_shows_what_it_finished(tmp_path: Path) -> None:
    """Spans of a run whose process died: no run end, so no run view, but nothing breaks."""
    trace = tmp_path / "t.jsonl"
    asyncio.run(traced_runs(trace))
    lines = trace.read_text().splitlines(keepends=True)
    kept = [line for line in lines if '"name": "run"' not in line]
    trace.write_text("".join(kept))
    assert views_from_spans(read_trace_file(trace)) == []
    assert "No run in this trace" in render_html([], "empty")


@settings(max_examples=30, deadline=None)
@given(
    turns=st.lists(
        st.lists(st.sampled_from(["lookup", "boom", "delete", "nosuch"]), min_size=1, max_size=3),
        max_size=6,
    ),
    content=st.booleans(),
)
def test_every_turn_and_tool_call_of_any_run_is_on_the_page(
    turns: list[list[str]], content: bool, tmp_path_factory: Any
) -> None:
    """Property: whatever the calls (allowed, denied, failing, unknown), each is on the page."""
    trace = tmp_path_factory.mktemp("v") / "t.jsonl"
    script: list[Any] = [
        calls(i, *((name, {"name": "x"} if name == "lookup" else {}) for name in names))
        for i, names in enumerate(turns, 1)
    ]
    with TraceFile(trace, content=content) as exporter:
        agent = Agent(
            "p",
            ScriptedModel([*script, "done"]),
            tools=TOOLS,
            hooks=HOOKS,
            exporters=[exporter],
            max_turns=len(script) + 1,
        )
        asyncio.run(agent.run("go"))
    (view,) = views_from_spans(read_trace_file(trace))
    assert [t["n"] for t in view["turns"]] == list(range(1, len(turns) + 2))
    page = render_html([view], "p")
    for i, names in enumerate(turns, 1):
        for j in range(len(names)):
            assert f'data-call-id="t{i}c{j}"' in page
    assert page.count('<section class="turn') == len(turns) + 1
    assert (view["output"] == "done") is content


def test_no_hooks_means_no_verdicts_but_every_call(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    with TraceFile(trace) as exporter:
        agent = Agent(
            "a",
            ScriptedModel([calls(1, ("lookup", {"name": "bo"})), "done"]),
            tools=TOOLS,
            hooks=Hooks(),
            exporters=[exporter],
        )
        asyncio.run(agent.run("go"))
    (view,) = views_from_spans(read_trace_file(trace))
    (row,) = view["turns"][0]["tools"]
    assert row["verdict"] is None and row["result"] == "account of bo"


@pytest.mark.parametrize("enabled", [True, False])
def test_reading_and_viewing_a_trace_leave_the_garbage_collector_as_they_found_it(
    tmp_path: Path, enabled: bool
) -> None:
    """The three pause the cyclic collector while they work (a long trace's full passes cost
    more than the work) and hand it back as it was, also when they raise."""
    trace = tmp_path / "run.jsonl"
    asyncio.run(traced_runs(trace))
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        views = views_from_spans(read_trace_file(trace))
        assert gc.isenabled() is enabled
        assert "<html" in render_html(views, "run") and gc.isenabled() is enabled
        with pytest.raises(ConfigError):
            read_trace_file(tmp_path / "missing.jsonl")
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@settings(max_examples=40, deadline=None)
@given(
    name=st.text(alphabet=st.sampled_from(BIDI + "ab<&\"'"), min_size=1, max_size=12),
    text=st.text(alphabet=st.sampled_from(BIDI + "xy\n"), max_size=12),
)
def test_no_bidi_control_reaches_the_page(name: str, text: str) -> None:
    """Property: whatever bidirectional controls a run's names and texts hold, the page shows
    each as its escape and holds none itself (a name could show as another tool's)."""
    span = {"span_id": "t", "parent_id": "r", "tainted": False}
    spans: list[dict[str, Any]] = [
        {"name": "run", "span_id": "r", "run_id": name, "attributes": {"agent": name}},
        {**span, "name": "tool_call", "attributes": {"tool": name, "call_id": name}},
        {**span, "span_id": "m", "name": "model_call", "payload": {"response": {"content": text}}},
    ]
    for span_ in spans[1:]:
        span_["payload"] = {**span_.get("payload", {}), "arguments": {name: text}, "result": text}
    page = render_html(views_from_spans(spans), name)
    assert not set(page) & set(BIDI)
    for char in set(name + text) & set(BIDI):
        assert f"\\u{ord(char):04x}" in page


async def _checkpointed(state: object, pm: Any) -> Any:
    from agentkit_core import open_checkpointer

    async with await open_checkpointer("memory://", manager=pm) as store:
        await store.snapshot("r1", state)
        return await store.resume("r1", include_terminal=True)


@pytest.mark.parametrize(
    ("state", "said"),
    [
        ({"pending": ["x"]}, "a pending call (str 'x')"),
        ({"pending": "xy"}, "its pending calls (str 'xy')"),
        ({"pending": 5}, "its pending calls (int 5)"),
        ({"transcript": 5}, "its transcript (int 5)"),
        (["x"], "its state (list ['x'])"),
    ],
)
def test_a_checkpoint_whose_state_is_no_run_is_shown_and_named(
    state: object, said: str, pm: Any
) -> None:
    """Before, a pending list of text or a transcript of a number was an AttributeError or a
    TypeError out of agentkit view --store; a state of no dict showed an empty run."""
    view = view_from_checkpoint(asyncio.run(_checkpointed(state, pm)), 1)
    assert view["omissions"] == [f"unreadable in the checkpoint: {said}"]
    assert html.escape(said, quote=True) in render_html([view], "t")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    state=st.dictionaries(st.sampled_from(["task", "transcript", "pending", "x"]), JSON, max_size=4)
    | JSON
)
def test_any_checkpoint_state_is_shown(state: object) -> None:
    """Property: whatever a checkpoint's state holds, its page is written."""
    from agentkit_core import PluginManager

    view = view_from_checkpoint(asyncio.run(_checkpointed(state, PluginManager())), 1)
    assert render_html([view], "t").endswith("</html>")


def test_a_checkpoint_of_many_unreadable_pending_calls_is_viewed_in_linear_time(pm: Any) -> None:
    """20,000 calls and 20,000 texts in a pending list took 13 s (each text was looked for
    among the calls); now well under a second (bound: 5 s)."""
    pending: list[object] = [{"id": str(i), "name": "t"} for i in range(20_000)]
    saved = asyncio.run(_checkpointed({"pending": pending + ["x"] * 20_000}, pm))
    began = time.monotonic()
    view = view_from_checkpoint(saved, 1)
    render_html([view], "t")
    assert time.monotonic() - began < 5
    assert len(view["pending"]) == 20_000 and len(view["omissions"]) == 20_000


ARGUMENTS = st.one_of(
    st.text(max_size=20),
    st.integers(1, 6000).map(lambda n: "[" * n + "]" * n),
    st.integers(4000, 6000).map(lambda n: '{"n": ' + "7" * n + "}"),
)


@settings(max_examples=40, deadline=None)
@given(raw=ARGUMENTS)
def test_any_arguments_a_model_wrote_are_shown(raw: str) -> None:
    """Property: whatever text a model gave as a call's arguments, from a trace or from a
    checkpoint, the page is written and shows it. Before, arguments nested past the parser's
    depth or holding a 5,000-digit number raised RecursionError or ValueError out of view."""
    model = {
        "name": "model_call",
        "span_id": "m",
        "parent_id": "r",
        "attributes": {"tool_call_ids": ["c1"], "tool_call_names": ["echo"]},
        "payload": {"response": {"content": "", "tool_calls": [{"arguments": raw}]}},
    }
    run = {"name": "run", "span_id": "r", "run_id": "x"}
    from_trace = views_from_spans([run, model])
    state = {"transcript": [Message.assistant("", tool_calls=[ToolCall("c1", "echo", raw)])]}
    from agentkit_core import PluginManager

    from_checkpoint = view_from_checkpoint(asyncio.run(_checkpointed(state, PluginManager())), 1)
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        shown_as_text = bool(raw.strip())
    else:
        shown_as_text = False  # shown parsed, as JSON
    for view in (*from_trace, from_checkpoint):
        page = render_html([view], "t")
        assert not shown_as_text or html.escape(raw[:40], quote=True) in page


def _deepest_parsable() -> object:
    """The most deeply nested list this stack's JSON parser takes."""
    depth = sys.getrecursionlimit()
    while True:
        try:
            return json.loads("[" * depth + "]" * depth)
        except RecursionError:
            depth -= 10


def _called_deeper(frames: int, call: Callable[[], str]) -> str:
    return call() if frames == 0 else _called_deeper(frames - 1, call)


def test_a_value_the_parser_took_is_shown_from_deeper_in_the_stack() -> None:
    """A value as deep as the parser takes, rendered 60 frames further down (an application
    calling the viewer from its own code), was a RecursionError out of the indenting encoder;
    it is now shown flat, or as a line saying it is too deep."""
    value = _deepest_parsable()
    run = {"name": "run", "span_id": "r", "run_id": "x"}
    tool = {
        "name": "tool_call",
        "span_id": "t",
        "parent_id": "r",
        "attributes": {"call_id": "c", "tool": "echo"},
        "payload": {"arguments": value, "result": "ok"},
    }
    views = views_from_spans([run, tool])
    page = _called_deeper(60, lambda: render_html(views, "deep"))
    # indented where the encoder reaches (Python 3.13's C recursion limit is deeper), flat, or
    # a line saying it is too deep: never a RecursionError
    shown = re.search(r"\[\s*\[\s*\[", page) or "(nested too deep to show)" in page
    assert "tool echo" in page and shown
