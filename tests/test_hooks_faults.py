"""A hook's faults at run time are attributed to it; hooks have deadlines; hooks get copies."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import BudgetExceeded
from agentkit_core import ConfigError
from agentkit_core import ElicitationError
from agentkit_core import GuardrailViolation
from agentkit_core import HookError
from agentkit_core import Hooks
from agentkit_core import HookTimeoutError
from agentkit_core import Message
from agentkit_core import PluginConfig
from agentkit_core import PluginManager
from agentkit_core import ProviderError
from agentkit_core import SlowHookWarning
from agentkit_core import StorageError
from agentkit_core import ToolCall
from agentkit_core import TurnInfo
from agentkit_core import hookimpl
from agentkit_core import open_checkpointer
from agentkit_core.plugin import FAILED
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


def plugin_hooks(name: str, field: str, impl: Any, **limits: Any) -> Hooks:
    plugin = SimpleNamespace(AGENTKIT_NAME=name, **{f"agentkit_{field}": hookimpl(impl)})
    pm = PluginManager(entry_points=False, plugins=[plugin], config=PluginConfig())
    return Hooks.from_plugins(pm, **limits)


# ---------------------------------------------------------------------- raises


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("kaput"),
        KeyError("missing"),
        TypeError("bad"),
        ZeroDivisionError("division by zero"),
        TimeoutError("its own timeout"),
        ProviderError("the provider it called is down"),
        StorageError("its store failed"),
        SystemExit(3),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.parametrize("asynchronous", [False, True])
async def test_a_raise_is_reraised_naming_the_plugin_and_the_hook(exc, asynchronous) -> None:
    def fail(transcript: list[Message]) -> None:
        raise exc

    async def fail_later(transcript: list[Message]) -> None:
        await asyncio.sleep(0)
        raise exc

    hooks = plugin_hooks("boom", "transform", fail_later if asynchronous else fail)
    with pytest.raises(HookError) as caught:
        await hooks.run_transform(make_test_ctx(), [])
    err = caught.value
    assert not isinstance(err, HookTimeoutError)
    assert (err.plugin, err.hook) == ("boom", "agentkit_transform")
    assert err.__cause__ is exc
    assert str(err).startswith("hook agentkit_transform of plugin 'boom' (")
    assert f"raised {type(exc).__name__}: {exc}" in str(err)


@pytest.mark.parametrize(
    ("field", "exc"),
    [
        ("output_guard", GuardrailViolation("refused", value="x")),
        ("before_model_call", BudgetExceeded("over budget")),
        ("before_tool_call", ElicitationError("declined")),
        ("after_tool_call", ConfigError("AGENTKIT_X='maybe' is not a boolean", source="env")),
        ("before_turn", HookError("inner", plugin="inner", hook="agentkit_transform")),
    ],
)
async def test_verdicts_run_errors_and_configuration_errors_pass_through(field, exc) -> None:
    def fail() -> None:
        raise exc

    hooks = plugin_hooks("guard", field, fail)
    args = {
        "output_guard": (Message.assistant("a"),),
        "before_model_call": (None,),
        "before_tool_call": (ToolCall("1", "x"),),
        "after_tool_call": (ToolCall("1", "x"), None),
        "before_turn": (TurnInfo(1),),
    }[field]
    with pytest.raises(type(exc)) as caught:
        await getattr(hooks, f"run_{field}")(make_test_ctx(), *args)
    assert caught.value is exc


async def test_cancellation_is_not_a_hook_fault() -> None:
    entered = asyncio.Event()

    async def wait(transcript: list[Message]) -> None:
        entered.set()
        await asyncio.Event().wait()

    hooks = plugin_hooks("waiter", "transform", wait, timeout=None)
    task = asyncio.ensure_future(hooks.run_transform(make_test_ctx(), []))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# ---------------------------------------------------------------------- deadlines


async def test_a_hanging_async_hook_is_cancelled_at_the_deadline_naming_the_plugin() -> None:
    cleaned: list[str] = []

    async def hang(ctx: Any, call: ToolCall) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("cancelled")

    hooks = plugin_hooks("sleepy", "before_tool_call", hang, timeout=0.2)
    ctx = make_test_ctx()
    started = time.perf_counter()
    with pytest.raises(HookTimeoutError) as caught:
        await hooks.run_before_tool_call(ctx, ToolCall("1", "x"))
    elapsed = time.perf_counter() - started
    assert 0.15 < elapsed < 5
    assert cleaned == ["cancelled"]
    err = caught.value
    assert isinstance(err, TimeoutError) and isinstance(err, HookError)
    assert (err.plugin, err.hook) == ("sleepy", "agentkit_before_tool_call")
    assert "of plugin 'sleepy'" in str(err) and "did not return within 0.2 s" in str(err)
    (span,) = ctx.trace.find("hook")
    assert span.attributes["plugin"] == "sleepy" and span.error == str(err)


async def test_a_hanging_hook_fails_the_run_and_the_checkpoint_says_failed(
    tmp_path: Path, pm
) -> None:
    async def hang(info: TurnInfo) -> None:
        await asyncio.sleep(3600)

    hooks = plugin_hooks("stuck", "before_turn", hang, timeout=0.1)
    cp = await open_checkpointer(f"sqlite:///{tmp_path / 'runs.db'}", manager=pm)
    try:
        agent = Agent("a", ScriptedModel(["never"]), hooks=hooks, checkpointer=cp)
        ctx = agent.new_context("r1")
        with pytest.raises(HookTimeoutError, match="of plugin 'stuck'"):
            await agent.run("go", ctx=ctx)
        versions = await cp.list_versions("r1")
        last = await cp.at_version("r1", versions[-1])
        assert last is not None and last.status == FAILED
    finally:
        await cp.aclose()


async def test_no_deadline_when_timeout_is_none_and_the_default_is_thirty_seconds() -> None:
    async def slow(transcript: list[Message]) -> list[Message]:
        await asyncio.sleep(0.05)
        return [Message.user("late")]

    assert Hooks().timeout == 30.0 and Hooks().slow == 0.1
    hooks = plugin_hooks("late", "transform", slow, timeout=None)
    assert [m.text for m in await hooks.run_transform(make_test_ctx(), [])] == ["late"]


@pytest.mark.parametrize(
    ("limits", "match"),
    [
        ({"timeout": 0}, r"Hooks timeout= must be a positive number of seconds or None, got 0"),
        ({"timeout": "5"}, r"timeout= must be a positive number .*got '5'"),
        ({"slow": None}, r"Hooks slow= must be a positive number of seconds, got None"),
        ({"slow": -1.0}, r"slow= must be a positive number of seconds, got -1.0"),
        ({"timeout": True}, r"got True"),
    ],
)
def test_bad_limits_are_refused(limits: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Hooks(**limits)


async def test_a_blocking_sync_hook_is_reported_on_the_trace_and_as_a_warning() -> None:
    def blocking(message: Message) -> None:
        time.sleep(0.1)  # no CPU time, but the loop waits: past 5 x slow of wall-clock time

    hooks = plugin_hooks("blocker", "output_guard", blocking, slow=0.01)
    ctx = make_test_ctx()
    with pytest.warns(
        SlowHookWarning,
        match=r"of plugin 'blocker' .* held the event loop for more than 0.05 s, waiting",
    ):
        out = await hooks.run_output_guard(ctx, Message.assistant("a"))
    assert out.text == "a"
    (span,) = ctx.trace.find("hook")
    assert span.attributes["plugin"] == "blocker" and span.attributes["slow"] == 0.01
    assert span.attributes["held"] >= 0.1 and span.duration is not None
    assert span.attributes["cpu"] < 0.1


async def test_a_computing_sync_hook_is_reported_by_its_cpu_time() -> None:
    def computing(message: Message) -> None:
        start = time.thread_time()
        while time.thread_time() - start < 0.03:  # CPU time past slow, wall time under 5 x
            pass

    hooks = plugin_hooks("busy", "output_guard", computing, slow=0.01)
    ctx = make_test_ctx()
    with pytest.warns(
        SlowHookWarning, match=r"of plugin 'busy' .* computed on the event loop for more than "
    ):
        await hooks.run_output_guard(ctx, Message.assistant("a"))
    (span,) = ctx.trace.find("hook")
    assert span.attributes["cpu"] >= 0.03


async def test_fast_hooks_and_awaited_hooks_are_not_reported_as_slow() -> None:
    async def waits(message: Message) -> None:
        await asyncio.sleep(0.4)  # awaiting does not hold the loop

    hooks = plugin_hooks("patient", "output_guard", waits, slow=0.2).merged(
        Hooks.of("quick", output_guard=lambda message: None)
    )
    ctx = make_test_ctx()
    await hooks.run_output_guard(ctx, Message.assistant("a"))
    assert ctx.trace.find("hook") == []


# ---------------------------------------------------------------------- the transcript is a copy


class Trimmer:
    """Keeps only the last message, trimming the list it is handed in place."""

    AGENTKIT_NAME = "trimmer"

    @hookimpl
    def agentkit_transform(self, transcript: list[Message]) -> list[Message]:
        del transcript[:-1]
        return transcript


@pytest.mark.parametrize("returns", [True, False])
async def test_trimming_the_transcript_in_place_leaves_the_saved_transcript_whole(
    tmp_path: Path, returns: bool
) -> None:
    class InPlace(Trimmer):
        @hookimpl
        def agentkit_transform(self, transcript: list[Message]) -> list[Message] | None:
            out = super().agentkit_transform(transcript)
            return out if returns else None

    pm = PluginManager(entry_points=False, plugins=[InPlace()], config=PluginConfig())

    def echo(text: str) -> str:
        """Echo."""
        return text

    model = ScriptedModel(
        [
            Message.assistant("", [ToolCall("c1", "echo", '{"text": "one"}')]),
            Message.assistant("", [ToolCall("c2", "echo", '{"text": "two"}')]),
            "done",
        ]
    )
    cp = await open_checkpointer(f"sqlite:///{tmp_path / 'runs.db'}", manager=PM)
    try:
        agent = Agent("t", model, "system prompt", [echo], manager=pm, checkpointer=cp)
        result = await agent.run("task")
        roles = [m.role for m in result.transcript]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
        saved = await cp.resume(result.run_id, include_terminal=True)
        assert saved is not None and saved.state["transcript"] == result.transcript
        # the model saw the trimmed list either way: the hook trimmed the fold's own copy
        assert [len(r.messages) for r in model.requests] == [1, 1, 1]
    finally:
        await cp.aclose()


async def test_the_next_transform_gets_a_list_no_earlier_hook_holds() -> None:
    kept: list[list[Message]] = []

    def keep(transcript: list[Message]) -> list[Message]:
        kept.append(transcript)
        return transcript

    def clear(transcript: list[Message]) -> list[Message]:
        transcript.clear()
        return transcript

    hooks = Hooks.of("first", transform=keep).merged(Hooks.of("second", transform=clear))
    live = [Message.user("a"), Message.user("b")]
    assert await hooks.run_transform(make_test_ctx(), live) == []
    assert [m.text for m in live] == ["a", "b"] and [m.text for m in kept[0]] == ["a", "b"]


# ---------------------------------------------------------------------- the command line


def test_agentkit_run_prints_one_line_naming_the_plugin_not_a_traceback(make_site, cli) -> None:
    site = make_site()
    site.add(
        "agentkit-test-crash",
        {"crash": "akt_crash"},
        {
            "akt_crash": "from agentkit_core import hookimpl\n\n"
            "@hookimpl\n"
            "def agentkit_before_turn(info):\n"
            "    raise KeyError('turn')\n"
        },
    )
    result = cli("run", "hello", "--model", "test", pythonpath=[site.path])
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("agentkit: error: hook agentkit_before_turn of plugin 'crash' (")
    assert line.endswith("raised KeyError: 'turn'")
