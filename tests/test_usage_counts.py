"""Cache and reasoning tokens: summed per run, kept in the session, shown by the trace and view."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import Recorder
from agentkit_core import Usage
from agentkit_core import open_checkpointer
from agentkit_core import open_sessions
from agentkit_core.cli import TraceFile
from agentkit_core.cli import read_trace_file
from agentkit_core.cli._viewer import render_html
from agentkit_core.cli._viewer import views_from_spans
from agentkit_core.plugin import ModelResponse
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

counts = st.integers(0, 10**9)
usages = st.builds(Usage, counts, counts, counts, counts, counts, counts)


@settings(max_examples=200)
@given(a=usages, b=usages, c=usages)
def test_usages_add_field_by_field(a: Usage, b: Usage, c: Usage) -> None:
    total = a + b + c
    assert total == c + b + a == a + (b + c)
    for name in ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "requests"):
        assert getattr(total, name) == getattr(a, name) + getattr(b, name) + getattr(c, name)
    assert total.total_tokens == total.input_tokens + total.output_tokens


def answer(message: Message, read: int, reasoning: int) -> ModelResponse:
    return ModelResponse(
        message,
        Usage(100, 20, 1, cache_read_tokens=read, cache_write_tokens=5, reasoning_tokens=reasoning),
    )


def echo(text: str) -> str:
    """Echo."""
    return text


def test_a_run_sums_them_and_every_reader_sees_them(tmp_path: Path, pm) -> None:
    script = ScriptedModel(
        [
            answer(Message.assistant("", (tool_call("echo", '{"text": "a"}'),)), 60, 7),
            answer(Message.assistant("done"), 90, 3),
        ]
    )
    trace = tmp_path / "run.jsonl"

    async def go() -> tuple[object, list[dict[str, object]]]:
        async with await open_sessions("memory://", manager=pm) as sessions:
            recorder = await Recorder.start(sessions)
            with TraceFile(trace) as exporter:
                agent = Agent(
                    model=script,
                    tools=[echo],
                    hooks=Hooks(),
                    recorder=recorder,
                    exporters=[exporter],
                )
                result = await agent.run("go")
            path = await sessions.path(recorder.session_id)
            return result, [i.body for i in path if i.kind == "response"]

    result, responses = asyncio.run(go())
    usage = result.usage  # type: ignore[attr-defined]
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens) == (
        150,
        10,
        10,
    )
    assert [r["usage"]["cache_read_tokens"] for r in responses] == [60, 90]
    assert [r["usage"]["reasoning_tokens"] for r in responses] == [7, 3]
    spans = read_trace_file(trace)
    calls = [s for s in spans if s["name"] == "model_call"]
    assert [c["attributes"]["cache_read_tokens"] for c in calls] == [60, 90]
    [run] = [s for s in spans if s["name"] == "run"]
    assert run["attributes"]["reasoning_tokens"] == 10
    page = html.unescape(render_html(views_from_spans(spans), "run"))
    assert "(60 cached in, 5 cache writes, 7 reasoning)" in page
    assert "(150 cached in, 10 cache writes, 10 reasoning)" in page  # the run's totals


def test_a_provider_that_reports_none_changes_nothing(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with TraceFile(trace) as exporter:
        Agent(model=ScriptedModel(["hi"]), hooks=Hooks(), exporters=[exporter]).run_sync("go")
    spans = read_trace_file(trace)
    assert all("cache_read_tokens" not in s["attributes"] for s in spans)
    assert "cached in" not in render_html(views_from_spans(spans), "run")


def test_a_resumed_run_goes_on_counting_from_its_checkpoint(pm) -> None:
    from agentkit_core import ToolCall
    from agentkit_core import ToolDecision

    def ask(ctx: object, call: ToolCall) -> ToolDecision:
        return ToolDecision.ask("a person decides")

    calling = Message.assistant("", (tool_call("echo", '{"text": "a"}'),))

    async def go() -> tuple[Usage, Usage]:
        async with await open_checkpointer("memory://", manager=pm) as cp:
            first = Agent(
                model=ScriptedModel([answer(calling, 60, 7)]),
                tools=[echo],
                hooks=Hooks.of("asker", before_tool_call=ask),
                checkpointer=cp,
            )
            held = await first.run("go")
            assert held.status == "suspended"
            saved = await cp.resume(held.run_id)
            assert saved is not None
            again = Agent(
                model=ScriptedModel([answer(Message.assistant("done"), 90, 3)]),
                tools=[echo],
                hooks=Hooks.of("asker", before_tool_call=ask),
                checkpointer=cp,
            )
            done = await again.resume(held.run_id, [held.pending[0].id])
            return saved.state["usage"], done.usage

    kept, total = asyncio.run(go())
    assert (kept.requests, kept.cache_read_tokens) == (1, 60)
    assert (total.requests, total.cache_read_tokens, total.reasoning_tokens) == (2, 150, 10)


def test_agentkit_runs_step_lines_name_them_as_the_view_does() -> None:
    import io

    from agentkit_core.cli._show import StepPrinter

    out = io.StringIO()
    script = ScriptedModel([answer(Message.assistant("done"), 60, 7)])
    Agent(model=script, hooks=Hooks(), exporters=[StepPrinter(out)]).run_sync("go")
    assert "100 in / 20 out tokens (60 cached in, 5 cache writes, 7 reasoning)" in out.getvalue()
