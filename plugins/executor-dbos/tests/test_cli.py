"""``agentkit worker``, ``submit``, ``result`` and ``cancel`` as real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from workers import agentkit
from workers import stop

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
