"""A killed worker's runs are taken over by the workers still serving, with no restart."""

from __future__ import annotations

import asyncio
import math
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentkit_executor_dbos import DBOSExecutor
from hypothesis import given
from hypothesis import strategies as st
from workers import agentkit
from workers import kill
from workers import pause
from workers import start
from workers import stop
from workers import wait_for_line

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import ToolDecision
from agentkit_core import tool
from agentkit_core.testing import TestModel

#: Beats fast enough for a test, with room for a loaded machine's stalls.
LIVENESS = {"RUNS_HEARTBEAT": "0.2", "RUNS_TAKEOVER_AFTER": "2"}


def rows(database: Path) -> set[str]:
    """The worker ids with a row in the liveness table (none before a worker made it)."""
    if not database.exists():
        return set()
    with closing(sqlite3.connect(database)) as db:
        made = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'agentkit_workers'").fetchall()
        if not made:
            return set()
        return {row[0] for row in db.execute("SELECT worker_id FROM agentkit_workers")}


@dataclass
class Pair:
    """Workers ``a`` and ``b`` on one SQLite file, one run at a time each, slow enough to be
    caught mid-run; and an executor to submit with."""

    database: str
    executor: DBOSExecutor
    workers: dict[str, subprocess.Popen[bytes]]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    env = {**LIVENESS, "RUNS_DELAY": "0.4"}
    workers = {w: start(database, tmp_path, w, "1", env={**env, "RUNS_WORKER": w}) for w in "ab"}
    executor = DBOSExecutor(database=database, queue="runs")
    try:
        yield Pair(database, executor, workers)
    finally:
        for proc in workers.values():
            stop(proc)
        executor.close()


def holder(executor: DBOSExecutor, run_id: str) -> str:
    """The worker running the run (which came from its own queue, however often recovered)."""

    async def status() -> Any:
        handle = await executor.client().retrieve_workflow_async(run_id)
        return await handle.get_status()

    now = asyncio.run(status())
    assert now.queue_name == "runs"
    return str(now.executor_id)


def freeze(workers: Iterable[subprocess.Popen[bytes]], database: Path) -> None:
    """Stop ``workers`` (SIGSTOP) at a moment none of them holds a lock on ``database``.

    DBOS keeps its SQLite file in rollback-journal mode, and a worker writes to it every beat:
    one stopped inside a transaction would keep every other process from reading or writing
    it, and the test would wait forever. So they are let go for an instant and stopped again
    until a probe can take the file's exclusive lock (and gives it back at once); their runs'
    steps sleep far longer than that instant.
    """
    for _ in range(200):
        for proc in workers:
            pause(proc)  # stopped indeed: one still running could take a lock after the probe
        with closing(sqlite3.connect(database, timeout=0, isolation_level=None)) as probe:
            try:
                probe.execute("BEGIN EXCLUSIVE")
            except sqlite3.OperationalError:
                pass  # locked: a worker stopped mid-transaction
            else:
                probe.execute("ROLLBACK")
                return
        for proc in workers:
            proc.send_signal(signal.SIGCONT)
        time.sleep(0.005)
    raise AssertionError(f"the workers never let go of {database}")


def caught(pair: Pair, logs: Path, run_id: str, line: str) -> tuple[str, str]:
    """Submit ``run_id``; once its progress holds ``line``, freeze its worker (SIGSTOP) there.

    Returns (its worker, the other worker). Both are frozen while the holder is looked up, so a
    loaded machine cannot let the run go past ``line`` first.
    """
    asyncio.run(pair.executor.submit("charge twice", agent="runs", run_id=run_id))
    wait_for_line(logs / f"{run_id}.progress", line, pair.workers["a"])
    freeze(pair.workers.values(), Path(pair.database.removeprefix("sqlite:///")))
    held = holder(pair.executor, run_id)
    other = "b" if held == "a" else "a"
    pair.workers[other].send_signal(signal.SIGCONT)
    return held, other


def test_a_surviving_worker_finishes_a_killed_workers_run_without_a_restart(
    pair: Pair, tmp_path: Path
) -> None:
    progress = tmp_path / "taken.progress"
    # killed mid-way through a non-idempotent call whose effect is done
    dead, survivor = caught(pair, tmp_path, "taken", "charge 1 effect")
    kill(pair.workers[dead])
    # the survivor's first new step; its worker id is back: it must not run the run too
    wait_for_line(progress, "model 3 start", pair.workers[survivor], timeout=60)
    assert holder(pair.executor, "taken") == survivor
    env = {**LIVENESS, "RUNS_WORKER": "late"}
    pair.workers[dead] = start(pair.database, tmp_path, dead, "1", env=env)
    run = asyncio.run(pair.executor.handle("taken").result(timeout=90))
    assert rows(tmp_path / "runs.sqlite") >= {survivor}

    assert run.status == "done" and run.output == "charged 1 and 2"
    effects = (tmp_path / "taken.effects").read_text(encoding="utf-8").splitlines()
    assert effects == [f"charge 1 by {dead}", f"charge 2 by {survivor}"]
    # the charge cut off mid-call was not run again: the model was told its outcome is unknown
    told = [m for m in run.transcript if m.role == "tool" and m.tool_call_id == "call_2"]
    assert told[0].is_error and "unknown" in told[0].content
    lines = progress.read_text(encoding="utf-8").splitlines()
    for line in ("model 1 start", "charge 1 start", "model 3 start", "charge 2 start"):
        assert lines.count(line) == 1, (line, lines)


def test_a_stalled_worker_taken_for_dead_cannot_record_past_the_takeover(
    pair: Pair, tmp_path: Path
) -> None:
    # no fencing of the work: the stalled worker's call in flight acts when it wakes, but DBOS
    # refuses its records from the takeover on, so it goes no further and nothing acts twice
    progress = tmp_path / "stalled.progress"
    stalled, survivor = caught(pair, tmp_path, "stalled", "charge 1 start")
    wait_for_line(progress, "model 3 start", pair.workers[survivor], timeout=60)
    pair.workers[stalled].send_signal(signal.SIGCONT)
    run = asyncio.run(pair.executor.handle("stalled").result(timeout=90))
    wait_for_line(progress, "charge 1 done", pair.workers[stalled])
    time.sleep(1)  # what it would do next, were its records taken
    assert run.status == "done"
    effects = (tmp_path / "stalled.effects").read_text(encoding="utf-8").splitlines()
    assert sorted(effects) == sorted([f"charge 1 by {stalled}", f"charge 2 by {survivor}"])
    told = [m for m in run.transcript if m.role == "tool" and m.tool_call_id == "call_2"]
    assert told[0].is_error and "unknown" in told[0].content
    lines = progress.read_text(encoding="utf-8").splitlines()
    assert lines.count("model 3 start") == 1 and lines.count("charge 1 start") == 1, lines
    noticed = (tmp_path / f"worker-{stalled}.err").read_text(encoding="utf-8")
    assert "was taken for dead" in noticed


def test_a_run_started_in_a_killed_worker_by_executor_run_is_taken_over_too(
    tmp_path: Path,
) -> None:
    # it was on no queue: DBOS's recovery puts it on its internal queue, which every worker
    # dequeues from
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="runs")
    env = {**LIVENESS, "RUNS_DELAY": "0.2"}
    dead = start(database, tmp_path, "a", env={**env, "RUNS_WORKER": "a", "RUNS_DIRECT": "own"})
    survivor = start(database, tmp_path, "b", env={**env, "RUNS_WORKER": "b"})
    try:
        wait_for_line(tmp_path / "own.progress", "charge 1 effect", dead)
        kill(dead)
        run = asyncio.run(executor.handle("own").result(timeout=90))
    finally:
        stop(dead)
        stop(survivor)
        executor.close()
    assert run.status == "done"
    effects = (tmp_path / "own.effects").read_text(encoding="utf-8").splitlines()
    assert effects == ["charge 1 by a", "charge 2 by b"]


@tool
def publish(text: str) -> str:
    """Publish a text (a person approves it first)."""
    return "published"


@pytest.mark.parametrize("holding", [False, True])
def test_a_worker_that_stops_removes_its_beat_unless_it_holds_runs(
    tmp_path: Path, holding: bool
) -> None:
    # a run waiting for an approval is held: the row stays, so the survivors take the run over
    file = tmp_path / "runs.sqlite"
    executor = DBOSExecutor(database=f"sqlite:///{file}", worker_id="w", heartbeat=0.1)
    asks = Hooks.of("t", before_tool_call=lambda ctx, call: ToolDecision("ask", "a person", "t"))
    agent = Agent("held", TestModel(), tools=[publish], executor=executor, hooks=asks)
    seen: list[set[str]] = []

    async def serve() -> None:
        stop = asyncio.Event()
        serving = asyncio.create_task(executor.serve(agent, stop=stop))
        while "w" not in rows(file):
            await asyncio.sleep(0.05)
        if holding:
            handle = await executor.submit("publish it", agent="held")
            assert await handle.pending(wait=60)
        seen.append(rows(file))
        stop.set()
        await serving

    try:
        asyncio.run(asyncio.wait_for(serve(), 120))
    finally:
        executor.close()
    assert seen == [{"w"}]
    assert rows(file) == ({"w"} if holding else set())


def test_agentkit_worker_stops_on_sigterm_and_removes_its_beat(tmp_path: Path) -> None:
    file = tmp_path / "runs.sqlite"
    database = f"sqlite:///{file}"
    argv = ["--database", database, "--worker-id", "w", "--heartbeat", "0.1", "--model", "test"]
    worker = subprocess.Popen(
        [sys.executable, "-m", "agentkit_core", "worker", *argv],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        end = time.monotonic() + 60
        while "w" not in rows(file) and time.monotonic() < end and worker.poll() is None:
            time.sleep(0.05)
        assert rows(file) == {"w"}
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0
    finally:
        stop(worker)
    assert rows(file) == set()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"heartbeat": 0}, r"'heartbeat'\] takes a number of seconds of at least 0.05, got 0"),
        ({"heartbeat": "2"}, r"'heartbeat'\] .* got '2'"),
        ({"takeover_after": math.nan}, r"'takeover_after'\] .* got nan"),
        ({"heartbeat": 2, "takeover_after": 5}, r"at least 3 heartbeats .*raise takeover_after"),
        ({"takeover_after": True}, r"'takeover_after'\] .* got True"),
    ],
)
def test_a_bad_liveness_option_is_named_with_the_fix(
    options: dict[str, object], named: str
) -> None:
    with pytest.raises(ConfigError, match=named):
        Kit(model=TestModel(), executor="dbos", executor_options=options)


seconds = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-10, 10_000),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)


@given(heartbeat=seconds, takeover_after=seconds)
def test_liveness_options_are_taken_exactly_when_they_can_work(
    heartbeat: object, takeover_after: object
) -> None:
    def sane(value: object) -> float | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) if math.isfinite(value) and value >= 0.05 else None

    beat, after = sane(heartbeat), sane(takeover_after)
    works = beat is not None and after is not None and after >= 3 * beat
    try:
        executor = DBOSExecutor(heartbeat=heartbeat, takeover_after=takeover_after)  # type: ignore[arg-type]
    except ConfigError as exc:
        assert not works
        bad = "heartbeat" if beat is None else "takeover_after"
        assert exc.source == f"executor_options[{bad!r}]"
        assert repr(heartbeat if bad == "heartbeat" else takeover_after) in str(exc)
    else:
        assert works
        assert (executor.heartbeat, executor.takeover_after) == (heartbeat, takeover_after)


def test_the_worker_command_refuses_a_takeover_shorter_than_three_beats(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    ran = agentkit(
        tmp_path, "worker", "--database", database, "--heartbeat", "1", "--takeover-after", "2"
    )
    assert ran.returncode == 2, ran.stderr
    assert "'takeover_after'" in ran.stderr and "raise takeover_after" in ran.stderr


def test_workers_are_frozen_only_when_none_holds_the_database(tmp_path: Path) -> None:
    """The freeze the takeover tests use waits out a worker stopped inside a transaction."""
    database = tmp_path / "busy.sqlite"
    sqlite3.connect(database).close()
    holds = (
        "import sqlite3, sys, time\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    db.execute('BEGIN EXCLUSIVE'); time.sleep(0.02); db.execute('ROLLBACK')\n"
        "    time.sleep(0.002)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", holds, str(database)], stdout=subprocess.PIPE
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
            for _ in range(5):
                freeze([proc], database)
                with closing(sqlite3.connect(database, timeout=0, isolation_level=None)) as probe:
                    probe.execute("BEGIN EXCLUSIVE")  # free while the holder is stopped
                    probe.execute("ROLLBACK")
                proc.send_signal(signal.SIGCONT)
                time.sleep(0.01)
        finally:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
