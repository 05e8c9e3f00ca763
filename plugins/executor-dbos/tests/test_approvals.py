"""An ask waits durably in the workflow and is answered from another process."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

from agentkit_executor_dbos import DBOSExecutor
from agentkit_executor_dbos._runtime import APPROVALS
from agentkit_executor_dbos._runtime import answers_for
from agentkit_executor_dbos._runtime import held_event
from hypothesis import given
from hypothesis import strategies as st
from workers import agentkit
from workers import kill
from workers import pause
from workers import start
from workers import stop

from agentkit_core import AgentResult
from agentkit_core import Approval
from agentkit_core import ToolCall

ASK = {"RUNS_ASK": "1", "RUNS_DELAY": "0.02"}


async def refused(executor: DBOSExecutor, run_id: str, call_id: str) -> AgentResult:
    """Refuse the call ``call_id`` the run waits on; the run's result once it went on."""
    handle = executor.handle(run_id)
    await handle.approve({call_id: False})
    return await handle.result(timeout=60)


def test_an_approval_is_awaited_across_a_restart_and_given_from_another_process(
    tmp_path: Path,
) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="runs")
    worker = start(database, tmp_path, env=ASK)
    try:

        async def first() -> list[str]:
            handle = await executor.submit("charge twice", agent="runs", run_id="asks")
            return [c.id for c in await handle.pending(wait=60)]

        assert asyncio.run(first()) == ["call_2"]
        # the worker dies while the run waits; its successor waits on
        kill(worker)
        worker = start(database, tmp_path, env=ASK)

        # another process lists the waiting call and approves it: the CLI
        db = ["--executor", "dbos", "--database", database]
        listed = agentkit(tmp_path, "approve", *db, "asks")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.split("\t")[:2] == ["call_2", "charge"]
        # an id the run does not hold for approval: refused, nothing sent, the run waits on
        stray = agentkit(tmp_path, "approve", *db, "asks", "--allow", "call_1", "--allow", "x")
        assert stray.returncode == 2, stray.stderr
        assert "'call_1' is not a call run 'asks' holds for approval" in stray.stderr
        # one call allowed and denied: unclear, so refused (not read as the last answer)
        both = agentkit(tmp_path, "approve", *db, "asks", "--allow", "call_2", "--deny", "call_2")
        assert both.returncode == 2, both.stderr
        assert "'call_2' is both approved and refused" in both.stderr

        async def around_the_check() -> list[str]:
            # sent past approve(): the run refuses it itself, and still lists its call
            await executor.client().send_async("asks", {"ghost": True}, APPROVALS)
            # and answers that are no answer: the run drops them, neither fails nor runs
            no, yes = Approval("call_2", False), Approval("call_2", True)
            await executor.client().send_async("asks", [no, yes], APPROVALS)
            await asyncio.sleep(1.0)
            return [c.id for c in await executor.handle("asks").pending(wait=5)]

        assert asyncio.run(around_the_check()) == ["call_2"]
        given = agentkit(tmp_path, "approve", *db, "asks", "--allow", "call_2", "--by", "human:ann")
        assert given.returncode == 0, given.stderr

        async def answer() -> AgentResult:
            handle = executor.handle("asks")
            for _ in range(600):  # until the run waits on its next charge
                calls = await handle.pending(wait=0.1)
                if [c.id for c in calls] == ["call_4"]:
                    break
            return await refused(executor, "asks", "call_4")

        result = asyncio.run(answer())
    finally:
        stop(worker)
        executor.close()
    assert result.status == "done"
    tools = {m.tool_call_id: m for m in result.transcript if m.role == "tool"}
    assert "charged 1" in tools["call_2"].content and not tools["call_2"].is_error
    assert tools["call_4"].is_error and "refused" in tools["call_4"].content
    effects = (tmp_path / "asks.effects").read_text(encoding="utf-8").splitlines()
    assert [line.rsplit(" by ", 1)[0] for line in effects] == ["charge 1"]


def test_an_approval_given_twice_never_answers_a_later_call_that_reuses_its_id(
    tmp_path: Path,
) -> None:
    """Two approve() of one held call both pass the check (the worker is stopped between); the
    second must not approve the run's next held call, which the model gave the same id."""
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="runs")
    worker = start(database, tmp_path, env={**ASK, "RUNS_SAME_IDS": "1"})

    async def held(handle: Any, amount: int) -> list[Any]:
        for _ in range(600):  # until the run waits on the charge of ``amount``
            calls = await handle.pending(wait=0.1)
            if [json.loads(c.arguments) for c in calls] == [{"amount": amount}]:
                return list(calls)
        raise AssertionError(f"run never held the charge of {amount}")

    try:

        async def twice() -> list[Any]:
            handle = await executor.submit("charge twice", agent="runs", run_id="twice")
            assert [c.id for c in await held(handle, 1)] == ["call"]
            pause(worker)  # a retry, or two people: both answers are queued before it reads
            try:
                await handle.approve(["call"])
                await handle.approve(["call"])
            finally:
                worker.send_signal(signal.SIGCONT)
            second = await held(handle, 2)  # the next charge, held under the same id
            await asyncio.sleep(1.0)  # the second answer has reached the run by now
            return [*second, *await handle.pending()]

        calls = asyncio.run(twice())
        assert [c.id for c in calls] == ["call", "call"]  # still held: a person decides it

        result = asyncio.run(refused(executor, "twice", "call"))
    finally:
        stop(worker)
        executor.close()
    assert result.status == "done"
    effects = (tmp_path / "twice.effects").read_text(encoding="utf-8").splitlines()
    assert [line.rsplit(" by ", 1)[0] for line in effects] == ["charge 1"]


@given(
    sent=st.integers(1, 5),
    waiting=st.integers(1, 5),
    answers=st.lists(st.sampled_from(["call", "call_1"]), max_size=3),
)
def test_answers_are_read_only_by_the_suspension_they_name(
    sent: int, waiting: int, answers: list[str]
) -> None:
    message = {"suspension": sent, "answers": [Approval(a) for a in answers]}
    read = answers_for(message, waiting)
    assert read == (message["answers"] if sent == waiting else None)
    calls = [ToolCall("call", "charge", "{}")]
    assert held_event({"suspension": waiting, "calls": calls}) == (waiting, calls)
    assert held_event(calls) == (None, calls)  # a run suspended by an earlier version
    assert held_event(None) == (None, [])
