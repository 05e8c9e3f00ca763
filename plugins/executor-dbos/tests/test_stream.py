"""A run submitted with stream=True is followed from another process, across a worker's crash."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentkit_executor_dbos import DBOSExecutor
from agentkit_executor_dbos import RunNotFound
from workers import kill
from workers import start
from workers import stop
from workers import wait_for_line

from agentkit_core import AgentResult
from agentkit_core import ConfigError
from agentkit_core.plugin import StreamEvent


def shape(events: list[StreamEvent]) -> list[tuple[str, str]]:
    """What a reader saw, less the ids: each event's kind and its text or call."""
    return [(e.kind, e.tool_call.name if e.tool_call else e.text) for e in events[:-1]]


async def follow(executor: DBOSExecutor, run_id: str, seen: list[str]) -> list[StreamEvent]:
    events = []
    async for event in executor.handle(run_id).stream(timeout=90):
        if not events:
            seen.append(await executor.handle(run_id).status())
        events.append(event)
    return events


def test_a_streamed_run_is_followed_live_and_across_a_crash(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="runs")
    worker = start(database, tmp_path)
    seen: list[str] = []

    async def reference() -> list[StreamEvent]:
        await executor.submit("charge twice", agent="runs", run_id="reference", stream=True)
        return await follow(executor, "reference", seen)

    async def crashed() -> list[StreamEvent]:
        nonlocal worker
        await executor.submit("charge twice", agent="runs", run_id="crashed", stream=True)
        reader = asyncio.ensure_future(follow(executor, "crashed", seen))
        progress = tmp_path / "crashed.progress"
        await asyncio.to_thread(wait_for_line, progress, "model 3 start", worker)
        kill(worker)  # the reader waits on, and reads on once a worker recovers the run
        worker = start(database, tmp_path)
        return await reader

    try:
        first = asyncio.run(reference())
        again = asyncio.run(crashed())
    finally:
        stop(worker)
        executor.close()

    # the events came while the run ran, each model call's in order, the result last
    assert seen[0] in ("PENDING", "ENQUEUED")
    kinds = [e.kind for e in first]
    assert kinds.count("done") == 5 and kinds[-1] == "result"
    assert [e.tool_call.name for e in first if e.tool_call] == [
        "lookup",
        "charge",
        "lookup",
        "charge",
    ]
    assert "".join(e.text for e in first if e.kind == "text") == "charged 1 and 2 "
    assert first[-1].result.output == "charged 1 and 2"
    # recovered: the replayed calls published nothing again, the rest streamed on
    assert shape(again) == shape(first)
    assert again[-1].result.transcript == first[-1].result.transcript


def test_a_run_not_streamed_gives_its_result_and_a_failed_one_its_error(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="runs")
    worker = start(database, tmp_path)

    async def main() -> tuple[list[StreamEvent], ConfigError]:
        with pytest.raises(RunNotFound, match="no run 'nope' in sqlite:///"):
            [e async for e in executor.handle("nope").stream()]
        await executor.submit("charge twice", agent="runs", run_id="plain")
        plain = [e async for e in executor.handle("plain").stream(timeout=90)]
        await executor.submit("x", agent="nobody", run_id="failing", stream=True)
        with pytest.raises(ConfigError) as failed:
            [e async for e in executor.handle("failing").stream(timeout=90)]
        return plain, failed.value

    try:
        plain, error = asyncio.run(main())
    finally:
        stop(worker)
        executor.close()
    assert [e.kind for e in plain] == ["result"]
    assert plain[0].result.output == "charged 1 and 2"
    assert "no agent named 'nobody'" in str(error)


def test_a_streamed_run_streams_on_across_the_approvals_it_waits_for(tmp_path: Path) -> None:
    """The stream stays open while the run waits for a person, and goes on once answered."""
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="runs")
    worker = start(database, tmp_path, env={"RUNS_ASK": "1", "RUNS_DELAY": "0.02"})

    async def main() -> tuple[list[StreamEvent], list[str], AgentResult]:
        handle = await executor.submit("charge twice", agent="runs", run_id="asks", stream=True)
        reader = asyncio.ensure_future(follow(executor, "asks", []))
        asked = [c.id for c in await handle.pending(wait=60)]
        await handle.approve({"call_2": True})
        for _ in range(600):  # until the run waits on its next charge
            calls = await handle.pending(wait=0.1)
            if calls and calls[0].id != "call_2":
                asked.append(calls[0].id)
                break
        await handle.approve({asked[-1]: False})
        return await reader, asked, await handle.result(timeout=60)

    try:
        events, asked, result = asyncio.run(main())
    finally:
        stop(worker)
        executor.close()
    assert asked == ["call_2", "call_4"]
    assert result.status == "done" and events[-1].kind == "result"
    assert events[-1].result.transcript == result.transcript
    # every model call streamed once, before and after each wait, in the transcript's order
    answers = [m for m in result.transcript if m.role == "assistant"]
    assert [e.kind for e in events].count("done") == len(answers)
    streamed = [e.tool_call.id for e in events if e.kind == "tool_call" and e.tool_call]
    assert streamed == [c.id for m in answers for c in m.tool_calls]
    tools = {m.tool_call_id: m for m in result.transcript if m.role == "tool"}
    assert not tools["call_2"].is_error and tools["call_4"].is_error
