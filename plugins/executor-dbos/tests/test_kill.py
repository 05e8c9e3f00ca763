"""SIGKILL a worker at chosen points of a run, restart it: the run completes, effects once.

The worker records a session too: each run's items are in it once, as an uninterrupted run's.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
from agentkit_executor_dbos import DBOSExecutor
from workers import kill
from workers import start
from workers import stop
from workers import wait_for_line

from agentkit_core import AgentResult
from agentkit_core import Sessions
from agentkit_core.plugin import SessionItem

#: Where the worker is killed (the line it has just written), and what the run must show.
KILL_POINTS = [
    "model 2 start",  # a model call in flight
    "lookup b start",  # an idempotent tool call in flight: run again
    "model 4 start",  # between steps: lookup b recorded, charge 2 not started
    "charge 1 effect",  # a non-idempotent call mid-way, its effect done: not run again
    "session append 3",  # turn 2's batch appended to the session, its step not yet recorded
]


def appends(progress: list[str]) -> list[str]:
    return [line for line in progress if line.startswith("session append")]


def effects(logs: Path, run_id: str) -> list[str]:
    path = logs / f"{run_id}.effects"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [line.rsplit(" by ", 1)[0] for line in lines]


async def session(path: Path) -> list[SessionItem]:
    """The path of the session ``"runs"`` the worker recorded."""
    from agentkit_session_sqlite import open_store

    sessions = Sessions(await open_store(f"sqlite:///{path}"))
    try:
        return await sessions.path("runs")
    finally:
        await sessions.aclose()


def test_a_killed_worker_resumes_every_run_from_its_last_step(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="runs")
    env = {"RUNS_SESSION": str(tmp_path / "sessions.sqlite")}
    results: dict[str, AgentResult] = {}

    async def submit(run_id: str) -> None:
        await executor.submit("charge twice", agent="runs", run_id=run_id)

    async def result(run_id: str) -> None:
        results[run_id] = await executor.handle(run_id).result(timeout=90)

    worker = start(database, tmp_path, env=env)
    try:
        asyncio.run(submit("reference"))
        asyncio.run(result("reference"))
        for i, point in enumerate(KILL_POINTS):
            run_id = f"killed-{i}"
            asyncio.run(submit(run_id))
            wait_for_line(tmp_path / f"{run_id}.progress", point, worker)
            kill(worker)
            worker = start(database, tmp_path, env=env)  # same worker id: it recovers the run
            asyncio.run(result(run_id))
    finally:
        stop(worker)
        executor.close()

    # checkpoints record as before: each run's latest is DONE, holding its whole transcript
    from runs_app import checkpointer

    async def latest(run_id: str) -> tuple[str, int]:
        saved = await checkpointer(tmp_path).resume(run_id, include_terminal=True)
        assert saved is not None
        return saved.status, len(saved.state["transcript"])

    for run_id, run in results.items():
        assert asyncio.run(latest(run_id)) == ("done", len(run.transcript)), run_id

    # the session holds each run's items once, in order, whatever the run's interruption
    items = asyncio.run(session(tmp_path / "sessions.sqlite"))
    runs = [item.body.get("run") for item in items[1:]]
    assert [r for i, r in enumerate(runs) if i == 0 or runs[i - 1] != r] == list(results)
    kinds = {r: [i.kind for i in items if i.body.get("run") == r] for r in results}
    for run_id, run in results.items():
        assert kinds[run_id] == kinds["reference"], run_id
        said = [
            item.body["message"]
            for item in items
            if item.body.get("run") == run_id and "message" in item.body
        ]
        assert said == run.transcript, run_id

    reference = results["reference"]
    reference_progress = (tmp_path / "reference.progress").read_text(encoding="utf-8").splitlines()
    assert reference.status == "done" and reference.output == "charged 1 and 2"
    assert effects(tmp_path, "reference") == ["charge 1", "charge 2"]
    for i, point in enumerate(KILL_POINTS):
        run = results[f"killed-{i}"]
        assert run.status == "done", point
        # each charge acted exactly once, however the run was interrupted
        assert effects(tmp_path, f"killed-{i}") == ["charge 1", "charge 2"], point
        progress = (tmp_path / f"killed-{i}.progress").read_text(encoding="utf-8").splitlines()
        if point.startswith("charge"):
            # the interrupted charge was not run again: the model was told its outcome is unknown
            assert progress.count("charge 1 start") == 1
            told = [m for m in run.transcript if m.role == "tool" and m.tool_call_id == "call_2"]
            assert told[0].is_error and "unknown" in told[0].content
            same = [
                m for m in run.transcript if m.tool_call_id != "call_2" and m.role != "assistant"
            ]
            assert same == [
                m
                for m in reference.transcript
                if m.tool_call_id != "call_2" and m.role != "assistant"
            ]
        else:
            assert run.transcript == reference.transcript, point
            # the replayed model calls count, as the ones run did: the same usage
            assert run.usage == reference.usage, point
            # the step in flight when the worker died ran again, after the restart; a batch
            # appended before the kill was found in the session, not appended again
            if point.startswith("session"):
                assert appends(progress) == appends(reference_progress), progress
            else:
                assert progress.count(point) == 2, (point, progress)
        if point == "model 4 start":
            # every call ran once and made its span; the restarted worker's replay of the three
            # calls before it made a span each too, marked replayed
            spans = (tmp_path / f"killed-{i}.spans").read_text(encoding="utf-8").splitlines()
            assert Counter(spans) == {
                "model_call ran": 5,
                "model_call replayed": 3,
                "tool_call ran": 4,
                "tool_call replayed": 3,
            }
            # no completed step ran twice: each model call and charge started once
            for line in ("model 1 start", "charge 1 start", "charge 2 start", "model 5 start"):
                assert progress.count(line) == 1, (point, line, progress)


@pytest.mark.parametrize("url", ["runs.sqlite", "mysql://db/runs", "sqlite://", ""])
def test_a_database_dbos_cannot_use_is_named_with_the_fix(url: str) -> None:
    from agentkit_core import ConfigError

    with pytest.raises(ConfigError, match="executor_options\\['database'\\]"):
        DBOSExecutor(database=url)
