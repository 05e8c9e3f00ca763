"""A run resumed after its process died in a tool call does not run that call again silently.

The in-process executor marks a batch in flight (in the checkpoint, in the session) before it
runs a call that must not run twice. On resume such a call's outcome is unknown: the model is
told (``interrupted="report"``) or the run suspends for a person (``"ask"``); an idempotent
call runs again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import Tool
from agentkit_core import ToolCall
from agentkit_core import open_checkpointer
from agentkit_core import open_sessions
from agentkit_core import tool
from agentkit_core.plugin import InProcessExecutor
from agentkit_core.testing import ScriptedModel
from tests.interrupted_app import agent

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

APP = Path(__file__).resolve().parent / "interrupted_app.py"
ROOT = APP.parent.parent


def killed_in_charge(directory: Path, where: str) -> None:
    """Start the app's run and SIGKILL it once its charge call started."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(APP), str(directory), where], env=env)
    try:
        deadline = time.monotonic() + 60
        while not (directory / "started").exists():
            assert proc.poll() is None, "the run ended before its charge started"
            assert time.monotonic() < deadline, "the charge never started"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def effects(directory: Path) -> list[str]:
    return (directory / "effects").read_text(encoding="utf-8").splitlines()


async def resumed(directory: Path, where: str, mode: str, answers: Any = None) -> Any:
    steps = ["paid, I think"]
    if where == "checkpoint":
        async with await open_checkpointer(f"sqlite:///{directory / 'runs.db'}", manager=PM) as cp:
            run = agent(directory, steps, hang=False, mode=mode, cp=cp)
            return await run.resume("r1", answers)
    async with await open_sessions(
        f"sqlite:///{directory / 'sessions.db'}", manager=PM
    ) as sessions:
        run = agent(directory, steps, hang=False, mode=mode)
        ctx = run.new_context("r1")
        ctx.recorder = await Recorder.resume(sessions, "s1")
        return await run.resume("r1", answers, ctx=ctx)


@pytest.mark.parametrize("where", ["checkpoint", "session"])
def test_a_killed_charge_is_reported_not_run_again(tmp_path: Path, where: str) -> None:
    killed_in_charge(tmp_path, where)
    assert effects(tmp_path).count("charge 5") == 1
    looked = effects(tmp_path).count("lookup ann")  # it ran beside the charge, or not yet
    result = asyncio.run(resumed(tmp_path, where, "report"))
    assert result.status == "done"
    assert effects(tmp_path).count("charge 5") == 1
    assert effects(tmp_path).count("lookup ann") == looked + 1  # idempotent: run again
    tools = {m.tool_call_id: m for m in result.transcript if m.role == "tool"}
    assert tools["c1"].is_error and "whether it acted is unknown" in tools["c1"].content
    assert not tools["c2"].is_error and "account of ann" in tools["c2"].content


@pytest.mark.parametrize("where", ["checkpoint", "session"])
def test_ask_suspends_on_the_unknown_call_and_a_person_decides(tmp_path: Path, where: str) -> None:
    killed_in_charge(tmp_path, where)
    before = effects(tmp_path)
    held = asyncio.run(resumed(tmp_path, where, "ask"))
    assert held.status == "suspended" and [c.id for c in held.pending] == ["c1"]
    assert "outcome of c1 is unknown" in (held.stop_reason or "")
    assert effects(tmp_path) == before  # nothing ran while it waits
    # an answer for the idempotent sibling is refused: it was not asked about
    with pytest.raises(ConfigError, match="'c2'"):
        asyncio.run(resumed(tmp_path, where, "ask", {"c2": True}))
    done = asyncio.run(resumed(tmp_path, where, "ask", {"c1": True}))
    assert done.status == "done"
    assert effects(tmp_path).count("charge 5") == 2  # a person said: charge again


def test_the_executor_refuses_an_unknown_interrupted_mode() -> None:
    with pytest.raises(ConfigError, match=r"interrupted=\) takes one of report, ask, got 'retry'"):
        InProcessExecutor(interrupted="retry")


# ---------------------------------------------------------------- generated batches, cancelled


def batch_tools(flags: list[tuple[bool, bool]], counts: dict[str, int], hang: str) -> list[Tool]:
    gate = asyncio.Event()

    def make(i: int, idempotent: bool, side_effects: bool) -> Tool:
        name = f"t{i}"

        @tool(name=name, idempotent=idempotent, side_effects=side_effects)
        async def act() -> str:
            """Act once."""
            counts[name] = counts.get(name, 0) + 1
            if name == hang:
                await gate.wait()  # never set: the run is cancelled here
            return f"done {name}"

        return act

    return [make(i, idem, side) for i, (idem, side) in enumerate(flags)]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flags=st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=4),
    data=st.data(),
)
async def test_no_call_that_must_not_run_twice_runs_twice(
    flags: list[tuple[bool, bool]], data: st.DataObject
) -> None:
    hang = f"t{data.draw(st.integers(0, len(flags) - 1))}"
    counts: dict[str, int] = {}
    calls = Message.assistant("", [ToolCall(f"c{i}", f"t{i}", "{}") for i in range(len(flags))])
    async with await open_checkpointer("memory://", manager=PM) as cp:

        def make(steps: list[Any], hanging: str) -> Agent:
            return Agent(
                "batch",
                model=ScriptedModel(steps),
                tools=batch_tools(flags, counts, hanging),
                checkpointer=cp,
            )

        first = make([calls], hang)
        run = asyncio.ensure_future(first.run("go", ctx=first.new_context("r")))
        while hang not in counts:
            await asyncio.sleep(0)
        run.cancel()  # a cancellation writes nothing, as a crash
        with pytest.raises(asyncio.CancelledError):
            await run
        before = dict(counts)
        if all(idempotent or not side for idempotent, side in flags):
            # no call needed a mark: nothing was kept, and running it all again is safe
            with pytest.raises(ConfigError, match="has no checkpoint"):
                await make(["end"], "").resume("r")
            return
        result = await make(["end"], "").resume("r")
    assert result.status == "done"
    tools = {m.tool_call_id: m for m in result.transcript if m.role == "tool"}
    for i, (idempotent, side_effects) in enumerate(flags):
        name, message = f"t{i}", tools[f"c{i}"]
        if idempotent or not side_effects:
            assert not message.is_error and f"done {name}" in message.content
        else:
            assert counts.get(name, 0) == before.get(name, 0) <= 1
            assert message.is_error and "whether it acted is unknown" in message.content
