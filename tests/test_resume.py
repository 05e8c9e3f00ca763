"""Durable runs: the loop checkpoints through the resolved checkpointer and resumes from it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import Checkpointer
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import hookimpl
from agentkit_core import open_checkpointer
from agentkit_core import tool
from agentkit_core.plugin import DONE
from agentkit_core.plugin import FAILED
from agentkit_core.plugin import RUNNING
from agentkit_core.plugin import SUSPENDED
from agentkit_core.plugin import DecodingError
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.testing import DictStore
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx

ran: list[str] = []


@tool
def lookup(name: str) -> str:
    """Look up an account."""
    ran.append(f"lookup {name}")
    return f"account of {name}"


@tool
def transfer(amount: int) -> str:
    """Move money."""
    ran.append(f"transfer {amount}")
    return f"moved {amount}"


class Policy:
    AGENTKIT_NAME = "policy"

    @hookimpl
    def agentkit_before_tool_call(self, ctx: Any, call: ToolCall) -> ToolDecision | None:
        if call.name == "transfer":
            return ToolDecision.ask("a person approves transfers")
        return None


HOOKS = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[Policy()]))
CALLS = Message.assistant(
    "",
    [
        ToolCall("c1", "lookup", '{"name": "ann"}'),
        ToolCall("c2", "transfer", '{"amount": 5}'),
        ToolCall("c3", "transfer", '{"amount": 7}'),
    ],
)


CALLS_ONE = Message.assistant("", [ToolCall("c1", "lookup", '{"name": "ann"}')])


def seen(request: ModelRequest) -> Message:
    """A final answer listing the tool results the model was shown."""
    return Message.assistant(" | ".join(m.text for m in request.messages if m.role == "tool"))


def bank(cp: Any, *steps: Any) -> Agent:
    return Agent(
        "bank", ScriptedModel(steps), tools=[lookup, transfer], hooks=HOOKS, checkpointer=cp
    )


@pytest.fixture
async def cp(pm) -> Any:
    ran.clear()
    checkpointer = await open_checkpointer("memory://", manager=pm)
    yield checkpointer
    await checkpointer.aclose()


async def statuses(cp: Checkpointer, run_id: str) -> list[str]:
    out = []
    for v in await cp.list_versions(run_id):
        c = await cp.at_version(run_id, v)
        assert c is not None
        out.append(c.status)
    return out


async def test_suspend_then_resume_runs_only_what_was_approved(cp: Checkpointer) -> None:
    first = await bank(cp, CALLS).run("pay ann")
    assert first.status == "suspended" and [c.id for c in first.pending] == ["c2", "c3"]
    assert ran == []
    saved = await cp.resume(first.run_id)
    assert saved is not None and saved.status == SUSPENDED
    assert [c.id for c in saved.state["pending"]] == ["c1", "c2", "c3"]

    result = await bank(cp, seen).resume(first.run_id, {"c2": True, "c3": False})
    assert result.status == "done"
    assert ran == ["lookup ann", "transfer 5"]  # c1 allowed by the hooks, c2 approved
    assert result.output.startswith("account of ann | moved 5 | tool call 'transfer' was denied")
    assert result.output.endswith("refused by a person")
    # the approved transfer is marked in flight before it runs, then the turn, then the answer
    assert await statuses(cp, first.run_id) == [SUSPENDED, RUNNING, RUNNING, DONE]
    with pytest.raises(ConfigError, match=r"cannot resume run '\w+': it is done in"):
        await bank(cp).resume(first.run_id)


async def test_a_call_nobody_approved_is_refused(cp: Checkpointer) -> None:
    first = await bank(cp, CALLS).run("pay ann")
    result = await bank(cp, seen).resume(first.run_id, ["c3"])
    assert ran == ["lookup ann", "transfer 7"]
    assert "moved 5" not in result.output and "refused by a person" in result.output


async def test_approvals_must_name_pending_calls(cp: Checkpointer) -> None:
    first = await bank(cp, CALLS).run("pay ann")
    with pytest.raises(ConfigError, match=r".c9. is not a call run .* holds.*waiting: c2, c3"):
        await bank(cp).resume(first.run_id, {"c9": True})
    assert await statuses(cp, first.run_id) == [SUSPENDED]


async def test_resume_needs_a_checkpointer_and_a_checkpoint(cp: Checkpointer) -> None:
    with pytest.raises(ConfigError, match=r"agent 'bank' has no checkpointer; pass checkpointer="):
        await bank(None).resume("r1")
    with pytest.raises(ConfigError, match=r"cannot resume run 'r1': it has no checkpoint in"):
        await bank(cp).resume("r1")
    with pytest.raises(ConfigError, match=r"resume\('r1'\) was given a context of run 'r2'"):
        await bank(cp).resume("r1", ctx=make_test_ctx(run_id="r2"))


async def test_a_failing_run_is_checkpointed_failed(cp: Checkpointer) -> None:
    agent = bank(cp, ProviderError("the provider is down"))
    ctx = agent.new_context("boom")
    with pytest.raises(ProviderError, match="down"):
        await agent.run("x", ctx=ctx)
    assert await statuses(cp, "boom") == [FAILED]
    assert await cp.resume("boom") is None


async def test_a_cancelled_run_stays_resumable(cp: Checkpointer) -> None:
    started = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait for something that never comes."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    first = Message.assistant("", [ToolCall("c1", "lookup", '{"name": "ann"}')])
    then = Message.assistant("", [ToolCall("c2", "wait", "{}")])
    agent = Agent(
        "slow", ScriptedModel([first, then]), tools=[lookup, wait], hooks=Hooks(), checkpointer=cp
    )
    run = asyncio.ensure_future(agent.run("x", ctx=agent.new_context("cut")))
    await asyncio.wait_for(started.wait(), 10)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    # each batch marked in flight before it ran, the first turn; no FAILED: the cut is not the
    # run's fault
    assert await statuses(cp, "cut") == [RUNNING, RUNNING, RUNNING]
    again = Agent(
        "slow", ScriptedModel([seen]), tools=[lookup, wait], hooks=Hooks(), checkpointer=cp
    )
    result = await again.resume("cut")
    # the cut call is not run again: the model is told its outcome is unknown
    assert result.output.startswith("account of ann | tool call 'wait' was denied by resume")
    assert "whether it acted is unknown" in result.output
    assert await statuses(cp, "cut") == [RUNNING, RUNNING, RUNNING, RUNNING, DONE]


async def test_the_loop_checkpoints_through_ctx_store_and_skips_tainted_runs() -> None:
    store = DictStore()
    agent = Agent("kv", ScriptedModel(["hi"]), hooks=Hooks())
    ctx = make_test_ctx(agent.model, run_id="kv-run", store=store)
    await agent.run("x", ctx=ctx)
    assert isinstance(ctx.checkpointer, Checkpointer)
    done = await ctx.checkpointer.resume("kv-run", include_terminal=True)
    assert done is not None and done.status == DONE
    assert done.state["transcript"][-1] == Message.assistant("hi")

    again = Agent("kv", ScriptedModel(["hi"]), hooks=Hooks())
    tainted = make_test_ctx(again.model, run_id="secret-run", store=store)
    tainted.secret_tainted = True
    assert (await again.run("x", ctx=tainted)).output == "hi"
    written = [store.data[key] for key in store.data if "secret-run/agent/" in key]
    assert len(written) == 1 and '"status": "tainted"' in written[0]  # a marker, no state
    assert '"state": "null"' in written[0]


APP = textwrap.dedent(
    '''
    import asyncio, json, os, signal, sys
    from agentkit_core import (Agent, Hooks, Message, PluginManager, ToolCall, ToolDecision,
                               hookimpl, open_checkpointer, tool)
    from agentkit_core.testing import ScriptedModel

    @tool
    def lookup(name: str) -> str:
        """Look up an account."""
        return f"account of {name}"

    @tool
    def transfer(amount: int) -> str:
        """Move money."""
        return f"moved {amount}"

    @tool
    def crash() -> str:
        """Die like a machine losing power."""
        os.kill(os.getpid(), signal.SIGKILL)

    class Policy:
        AGENTKIT_NAME = "policy"

        @hookimpl
        def agentkit_before_tool_call(self, ctx, call):
            return ToolDecision.ask("approve transfers") if call.name == "transfer" else None

    def seen(request):
        return " | ".join(m.text for m in request.messages if m.role == "tool")

    SCRIPTS = {
        "suspend": [Message.assistant("", [ToolCall("c1", "lookup", '{"name": "ann"}'),
                                           ToolCall("c2", "transfer", '{"amount": 5}')])],
        "crash": [Message.assistant("", [ToolCall("c1", "lookup", '{"name": "bob"}')]),
                  Message.assistant("", [ToolCall("c2", "crash", "{}")])],
        "resume": [seen],
    }

    async def main(mode, url, run_id, approvals):
        hooks = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[Policy()]))
        async with await open_checkpointer(url, manager=PluginManager()) as cp:
            agent = Agent("bank", ScriptedModel(SCRIPTS[mode]), tools=[lookup, transfer, crash],
                          hooks=hooks, checkpointer=cp)
            if mode == "resume":
                result = await agent.resume(run_id, json.loads(approvals))
            else:
                result = await agent.run("pay", ctx=agent.new_context(run_id))
            print(json.dumps({"status": result.status, "output": result.output,
                              "pending": [c.id for c in result.pending]}), flush=True)

    asyncio.run(main(*sys.argv[1:]))
    '''
)


def app(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "app.py"
    script.write_text(APP, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_suspend_in_one_process_resume_in_another(tmp_path: Path, pm) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    suspended = app(tmp_path, "suspend", url, "run-1", "null")
    assert suspended.returncode == 0, suspended.stderr
    assert json.loads(suspended.stdout) == {
        "status": "suspended",
        "output": None,
        "pending": ["c2"],
    }
    resumed = app(tmp_path, "resume", url, "run-1", '{"c2": true}')
    assert resumed.returncode == 0, resumed.stderr
    out = json.loads(resumed.stdout)
    assert out == {"status": "done", "output": "account of ann | moved 5", "pending": []}
    async with await open_checkpointer(url, manager=pm) as cp:
        assert await statuses(cp, "run-1") == [SUSPENDED, RUNNING, RUNNING, DONE]


async def test_a_crashed_run_resumes_from_its_last_running_checkpoint(tmp_path: Path, pm) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    crashed = app(tmp_path, "crash", url, "run-2", "null")
    assert crashed.returncode == -9, crashed.stderr
    async with await open_checkpointer(url, manager=pm) as cp:
        assert await statuses(cp, "run-2") == [RUNNING, RUNNING, RUNNING]  # the last: in flight
    resumed = app(tmp_path, "resume", url, "run-2", "null")
    assert resumed.returncode == 0, resumed.stderr
    output = json.loads(resumed.stdout)["output"]
    assert output.startswith("account of bob | ") and "whether it acted is unknown" in output
    async with await open_checkpointer(url, manager=pm) as cp:
        assert await statuses(cp, "run-2") == [RUNNING, RUNNING, RUNNING, RUNNING, DONE]
        done = await cp.resume("run-2", include_terminal=True)
        assert done is not None and done.state["turn"] == 3  # the cut batch was turn 2


async def test_an_agent_given_a_port_snapshots_through_one_checkpointer(pm) -> None:
    port = await open_checkpoint_store("memory://", manager=pm)
    agent = Agent(
        "p", ScriptedModel([CALLS_ONE, "done"]), tools=[lookup], hooks=Hooks(), checkpointer=port
    )
    assert isinstance(agent.checkpointer, Checkpointer) and agent.checkpointer.port is port
    await agent.run("x", ctx=agent.new_context("one"))
    assert await agent.checkpointer.list_versions("one") == [1, 2, 3]  # in flight, turn, done
    with pytest.raises(ConfigError, match="checkpointer= is 'nope'"):
        Agent("p", ScriptedModel([]), checkpointer="nope")
    await port.aclose()


GOOD = {"task": "x", "transcript": [], "turn": 1, "pending": []}


@pytest.mark.parametrize(
    ("state", "path", "message"),
    [
        ("{not json", "state", r"not JSON"),
        ("[1, 2]", "state", r"holds list, expected an agent run's state"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "task"}), 'state["task"]', "missing"),
        (
            '{"task": "x", "transcript": [{"role": "user"}], "turn": 1, "pending": []}',
            'state["transcript"][0]',
            r"holds dict, expected Message",
        ),
        (
            '{"task": "x", "transcript": [], "turn": "1", "pending": []}',
            'state["turn"]',
            r"holds str, expected int",
        ),
        (
            '{"task": "x", "transcript": [], "turn": 1, "pending": [7]}',
            'state["pending"][0]',
            r"holds int, expected ToolCall",
        ),
        (
            '{"task": "x", "transcript": [], "turn": 1, "pending": [], "spent": "1"}',
            'state["spent"]',
            r"holds '1', expected dollars",
        ),
    ],
)
async def test_resuming_a_corrupt_checkpoint_names_store_run_version_and_path(
    tmp_path: Path, state: str, path: str, message: str, pm
) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    agent = bank(await open_checkpointer(url, manager=pm), CALLS_ONE, "done")
    await agent.run("x", ctx=agent.new_context("hurt"))
    assert agent.checkpointer is not None
    await agent.checkpointer.aclose()
    # damage the record behind agentkit
    with closing(sqlite3.connect(tmp_path / "runs.db")) as db, db:
        db.execute("DELETE FROM agentkit_checkpoints WHERE version >= 2")
        db.execute("UPDATE agentkit_checkpoints SET state = ? WHERE version = 1", (state,))
    again = bank(await open_checkpointer(url, manager=pm), "done")
    assert again.checkpointer is not None
    with pytest.raises(DecodingError, match=message) as info:
        await again.resume("hurt")
    assert (info.value.run_id, info.value.version, info.value.path) == ("hurt", 1, path)
    assert info.value.store == url and str(info.value).startswith(f"{url}: version 1")
    await again.checkpointer.aclose()
