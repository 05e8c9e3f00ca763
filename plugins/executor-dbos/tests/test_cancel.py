"""A run cancelled from another process stops at its next step."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from agentkit_executor_dbos import DBOSExecutor
from workers import start
from workers import stop
from workers import wait_for_line

from agentkit_core import RunError


def test_a_run_cancelled_from_another_process_stops_at_its_next_step(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    executor = DBOSExecutor(database=database, queue="runs")
    worker = start(database, tmp_path, env={"RUNS_DELAY": "0.3"})
    progress = tmp_path / "cut.progress"
    try:
        asyncio.run(executor.submit("charge twice", agent="runs", run_id="cut"))
        wait_for_line(progress, "model 2 start", worker)
        asyncio.run(executor.cancel("cut"))
        with pytest.raises(RunError, match="'cut' was cancelled"):
            asyncio.run(executor.handle("cut").result(timeout=30))
        time.sleep(1.5)  # long enough for several more steps, had it gone on
        assert asyncio.run(executor.handle("cut").status()) == "CANCELLED"
    finally:
        stop(worker)
        executor.close()
    lines = progress.read_text(encoding="utf-8").splitlines()
    assert "charge 1 start" not in lines and "model 3 start" not in lines, lines
