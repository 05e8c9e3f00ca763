"""``agentkit worker``, ``submit``, ``result``, ``cancel`` and ``approve`` as real processes."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from agentkit_executor_dbos import DBOSExecutor
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from workers import agentkit
from workers import start
from workers import stop

from agentkit_core import Agent
from agentkit_core import AgentResult
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core.testing import TestModel

TOOLS = '''
from agentkit_core import tool


@tool
def note(text: str) -> str:
    """Note a text."""
    return "noted"


TOOLS = [note]
'''


def test_submit_then_a_worker_runs_it_and_result_prints_it(tmp_path: Path) -> None:
    (tmp_path / "clitools.py").write_text(TOOLS)
    db = ["--executor", "dbos", "--database", f"sqlite:///{tmp_path / 'runs.sqlite'}"]
    submitted = agentkit(tmp_path, "submit", *db, "--queue", "cli", "--id", "run-1", "take a note")
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stdout.strip() == "run-1"
    waiting = agentkit(tmp_path, "result", *db, "run-1")
    assert waiting.returncode == 3 and "did not finish" in waiting.stderr

    serve = ["--queue", "cli", "--concurrency", "2", "--model", "test", "--tools", "clitools:TOOLS"]
    worker = subprocess.Popen(
        [sys.executable, "-m", "agentkit_core", "worker", *db, *serve],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        done = agentkit(tmp_path, "result", *db, "run-1", "--wait", "90")
        task = ["--queue", "cli", "--id", "run-s", "--stream", "take a note"]
        assert agentkit(tmp_path, "submit", *db, *task).returncode == 0
        streamed = agentkit(tmp_path, "result", *db, "run-s", "--stream")
    finally:
        stop(worker)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "TestModel answer after 1 tool result(s) (note)"
    # the text as it came: the same answer, printed in the deltas the model streamed
    assert streamed.returncode == 0, streamed.stderr
    assert streamed.stdout == "TestModel answer after 1 tool result(s) (note)\n"


def test_a_cancelled_run_reports_it(tmp_path: Path) -> None:
    db = ["--executor", "dbos", "--database", f"sqlite:///{tmp_path / 'runs.sqlite'}"]
    assert agentkit(tmp_path, "submit", *db, "--id", "run-2", "never run").returncode == 0
    cancelled = agentkit(tmp_path, "cancel", *db, "run-2")
    assert cancelled.returncode == 0, cancelled.stderr
    result = agentkit(tmp_path, "result", *db, "run-2")
    assert result.returncode == 1 and "cancelled" in result.stderr


def test_bad_input_is_named_with_the_fix(tmp_path: Path) -> None:
    bad_url = agentkit(tmp_path, "submit", "--database", "runs.sqlite", "task")
    assert bad_url.returncode == 2
    assert "'runs.sqlite'" in bad_url.stderr and "sqlite:///runs.sqlite" in bad_url.stderr
    other = agentkit(tmp_path, "submit", "--executor", "in-process", "task")
    assert other.returncode == 2 and "--executor dbos" in other.stderr


COMMANDS = [
    ["submit", "a task"],
    ["worker", "--model", "test"],
    ["result", "run-1"],
    ["cancel", "run-1"],
    ["approve", "run-1"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_no_database_is_refused_naming_the_ways_to_give_one(
    tmp_path: Path, command: list[str]
) -> None:
    done = agentkit(tmp_path, *command, env={"AGENTKIT_DATABASE": ""})
    # an empty variable is refused as a URL; an absent one (below) names the ways
    assert done.returncode == 2 and "AGENTKIT_DATABASE takes a database URL" in done.stderr
    env = {k: v for k, v in os.environ.items() if k != "AGENTKIT_DATABASE"}
    done = subprocess.run(
        [sys.executable, "-m", "agentkit_core", *command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("agentkit: error:")
    assert f"agentkit {command[0]} needs the DBOS database" in done.stderr
    assert "--database URL" in done.stderr and "AGENTKIT_DATABASE" in done.stderr
    assert list(tmp_path.iterdir()) == []  # no ./agentkit-runs.sqlite no worker reads


def test_the_database_comes_from_the_flag_then_the_environment_then_the_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "agentkit.toml").write_text(
        '[kit]\nexecutor_options = { database = "sqlite:///file.sqlite" }\n'
    )
    assert agentkit(tmp_path, "submit", "--id", "f", "a task").returncode == 0
    env = {"AGENTKIT_DATABASE": "sqlite:///env.sqlite"}
    assert agentkit(tmp_path, "submit", "--id", "e", "a task", env=env).returncode == 0
    flag = ["--database", "sqlite:///flag.sqlite"]
    assert agentkit(tmp_path, "submit", *flag, "--id", "g", "a task", env=env).returncode == 0
    held = {
        name: asyncio.run(_ids(f"sqlite:///{tmp_path / name}"))
        for name in ("file.sqlite", "env.sqlite", "flag.sqlite")
    }
    assert held == {"file.sqlite": ["f"], "env.sqlite": ["e"], "flag.sqlite": ["g"]}
    bad = agentkit(tmp_path, "result", "r", env={"AGENTKIT_DATABASE": "runs.sqlite"})
    assert bad.returncode == 2 and "AGENTKIT_DATABASE 'runs.sqlite'" in bad.stderr


async def _ids(database: str) -> list[str]:
    executor = DBOSExecutor(database=database)
    try:
        return [w.workflow_id for w in await executor.client().list_workflows_async()]
    finally:
        executor.close()


def test_an_id_taken_by_another_task_is_refused_and_an_empty_one_too(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    db = ["--database", database]
    first = agentkit(tmp_path, "submit", *db, "--id", "x", "task a")
    again = agentkit(tmp_path, "submit", *db, "--id", "x", "task a")  # a retried submit
    other = agentkit(tmp_path, "submit", *db, "--id", "x", "task b")
    streamed = agentkit(tmp_path, "submit", *db, "--id", "x", "--stream", "task a")
    queued = agentkit(tmp_path, "submit", *db, "--id", "x", "--queue", "bank", "task a")
    empty = agentkit(tmp_path, "submit", *db, "--id", "", "task c")
    assert (first.returncode, first.stdout) == (0, "x\n")
    assert (again.returncode, again.stdout, again.stderr) == (0, "x\n", "")
    assert other.returncode == 2 and other.stdout == "", other.stderr
    assert "run id 'x' is taken by another submission (task 'task a'" in other.stderr
    assert "so task 'task b' for agent 'cli' on queue 'agentkit' was not submitted" in other.stderr
    assert streamed.returncode == 2 and "so streamed task 'task a'" in streamed.stderr
    assert queued.returncode == 2 and "on queue 'bank' was not submitted" in queued.stderr
    assert queued.stderr.count("\n") == 1  # DBOS's own warning about the queue is not shown
    assert empty.returncode == 2 and "run id '' is empty" in empty.stderr
    assert asyncio.run(_ids(database)) == ["x"]


#: Tasks a submit takes: any text that is not blank.
tasks = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1).filter(
    str.strip
)


@settings(max_examples=15, deadline=None)
@given(first=tasks, second=st.one_of(st.none(), tasks))
def test_a_run_id_holds_the_first_task_it_was_submitted_with(
    first: str, second: str | None
) -> None:
    second = first if second is None else second  # half the time, a retry of the same task
    run_id = f"run-{uuid.uuid4().hex}"

    async def submit_twice(database: str) -> tuple[bool, str]:
        executor = DBOSExecutor(database=database)
        try:
            await executor.submit(first, run_id=run_id)
            try:
                await executor.submit(second, run_id=run_id)
            except ConfigError:
                taken = True
            else:
                taken = False
            held = await executor.handle(run_id).record(load_input=True)
            assert held.input is not None
            return taken, held.input["args"][1]
        finally:
            executor.close()

    with tempfile.TemporaryDirectory() as folder:
        taken, task = asyncio.run(submit_twice(f"sqlite:///{folder}/runs.sqlite"))
    assert taken == (second != first) and task == first


def _finished_run(database: str, run_id: str) -> AgentResult:
    """A run of the test model, run to its end in this process."""
    kit = Kit(model=TestModel(), executor="dbos", executor_options={"database": database})
    agent = Agent.from_config(kit.config())
    executor = agent.executor
    assert isinstance(executor, DBOSExecutor)
    try:
        return asyncio.run(executor.run(agent, "say hi", run_id=run_id))
    finally:
        executor.close()


def test_cancel_says_a_run_had_finished_and_leaves_it(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    db = ["--database", database]
    output = _finished_run(database, "done-1").output
    cancelled = agentkit(tmp_path, "cancel", *db, "done-1")
    assert cancelled.returncode == 1, cancelled.stderr
    assert cancelled.stderr == (
        "agentkit: run 'done-1' had already finished (SUCCESS); nothing was cancelled\n"
    )
    result = agentkit(tmp_path, "result", *db, "done-1")
    assert (result.returncode, result.stdout) == (0, output + "\n")

    async def at_once() -> str:  # a wait too short for DBOS's first poll still finds it ended
        executor = DBOSExecutor(database=database)
        try:
            return (await executor.handle("done-1").result(timeout=0)).output
        finally:
            executor.close()

    assert asyncio.run(at_once()) == output

    assert agentkit(tmp_path, "submit", *db, "--id", "q-1", "a task").returncode == 0
    first = agentkit(tmp_path, "cancel", *db, "q-1")
    second = agentkit(tmp_path, "cancel", *db, "q-1")
    assert (first.returncode, first.stderr) == (0, "agentkit: run 'q-1' cancelled\n")
    assert (second.returncode, second.stderr) == (0, "agentkit: run 'q-1' was already cancelled\n")


def test_approve_says_when_a_run_waits_on_no_call_and_refuses_a_stray_answer(
    tmp_path: Path,
) -> None:
    db = ["--database", f"sqlite:///{tmp_path / 'runs.sqlite'}"]
    assert agentkit(tmp_path, "submit", *db, "--id", "q-1", "a task").returncode == 0
    listed = agentkit(tmp_path, "approve", *db, "q-1")
    assert (listed.returncode, listed.stdout) == (0, "")
    assert listed.stderr == "agentkit: run 'q-1' waits on no call (it is ENQUEUED)\n"
    stray = agentkit(tmp_path, "approve", *db, "q-1", "--allow", "nope")
    assert stray.returncode == 2, stray.stderr
    assert "'nope' is not a call run 'q-1' holds for approval" in stray.stderr
    assert stray.stderr.count("\n") == 1
    still = agentkit(tmp_path, "result", *db, "q-1")
    assert still.returncode == 3 and "it is ENQUEUED" in still.stderr


def test_result_names_the_queue_of_a_run_no_worker_took(tmp_path: Path) -> None:
    db = ["--database", f"sqlite:///{tmp_path / 'runs.sqlite'}"]
    assert (
        agentkit(tmp_path, "submit", *db, "--queue", "bank", "--id", "b-1", "a task").returncode
        == 0
    )
    for extra in ([], ["--stream", "--wait", "0.5"]):
        waiting = agentkit(tmp_path, "result", *db, "b-1", *extra)
        assert waiting.returncode == 3, waiting.stderr
        assert "it is ENQUEUED on queue 'bank'" in waiting.stderr
        assert "start a worker on queue 'bank'" in waiting.stderr
        assert "'agentkit'" not in waiting.stderr


def test_result_says_a_run_waits_for_approval_on_its_queue(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="bank")
    worker = start(
        database, tmp_path, env={"RUNS_ASK": "1", "RUNS_DELAY": "0.02", "RUNS_QUEUE": "bank"}
    )
    try:

        async def submitted() -> list[str]:
            handle = await executor.submit("charge twice", agent="runs", run_id="asks")
            return [c.id for c in await handle.pending(wait=60)]

        assert asyncio.run(submitted()) == ["call_2"]
        db = ["--database", database]
        waiting = agentkit(tmp_path, "result", *db, "asks", "--wait", "0.2")
        answered = agentkit(tmp_path, "approve", *db, "asks", "--allow", "call_2")
    finally:
        stop(worker)
        executor.close()
    assert waiting.returncode == 3, waiting.stderr
    assert "it waits on a person's approval of call_2 (charge)" in waiting.stderr
    assert "agentkit approve asks" in waiting.stderr and "queue 'bank'" in waiting.stderr
    assert "start a worker" not in waiting.stderr
    assert answered.returncode == 0, answered.stderr
    assert answered.stderr == "agentkit: run 'asks': allowed call_2; its worker runs it on\n"


def test_an_unopenable_database_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'missing' / 'runs.sqlite'}"
    for command in (["submit", "a task"], ["worker", "--model", "test"]):
        done = agentkit(tmp_path, command[0], "--database", url, *command[1:])
        assert done.returncode == 2, done.stderr
        error = [line for line in done.stderr.splitlines() if "error" in line.lower()]
        assert error == [
            f"agentkit: error: cannot open the DBOS database {url}: OperationalError: unable to "
            "open database file; check the URL and that the database's server is up"
        ], done.stderr
        assert "Traceback" not in done.stderr and "sqlalche.me" not in done.stderr
        assert "<DBOSExecutor" not in done.stderr  # the worker's banner names the URL


def test_messages_name_the_database_not_the_executor_object(tmp_path: Path) -> None:
    executor = DBOSExecutor(database=f"sqlite:///{tmp_path / 'runs.sqlite'}")
    agent = Agent("elsewhere", TestModel())  # on the in-process executor
    with pytest.raises(ConfigError) as refused:
        executor.register(agent)
    assert "<" not in str(refused.value)
    assert f"database sqlite:///{tmp_path / 'runs.sqlite'}" in str(refused.value)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(wait=st.one_of(st.floats(), st.sampled_from(["-1", "nan", "-inf", "soon", "", "1e400"])))
def test_result_wait_is_a_number_of_seconds_or_refused_not_read_as_zero(
    wait: float | str, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentkit_core import PluginManager
    from agentkit_core.cli import main

    text = str(wait)
    seconds = float(text) if text not in ("soon", "") else math.nan
    with tempfile.TemporaryDirectory() as scratch:
        url = f"sqlite:///{scratch}/absent.sqlite"  # a usage error comes before the database
        code = main(["result", "--database", url, "r1", f"--wait={text}"], manager=PluginManager())
    err = capsys.readouterr().err
    if seconds >= 0:
        assert "argument --wait" not in err  # taken: the missing database is the error
    else:
        assert code == 2 and "argument --wait" in err and repr(text) in err, err
