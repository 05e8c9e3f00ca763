"""Three worker processes on one PostgreSQL queue; one is killed midway."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

from agentkit_executor_dbos import DBOSExecutor
from workers import kill
from workers import start
from workers import stop

RUNS = 100
FAST = {"RUNS_DELAY": "0.02"}


def test_three_workers_share_a_queue_and_a_killed_ones_runs_complete_once(
    pg_dsn: str, tmp_path: Path
) -> None:
    executor = DBOSExecutor(database=pg_dsn, queue="runs")
    ids = [f"pg-{i}" for i in range(RUNS)]

    async def submit() -> None:
        for run_id in ids:
            await executor.submit("charge twice", agent="runs", run_id=run_id)

    async def results() -> list[str]:
        done = await asyncio.gather(*(executor.handle(i).result(timeout=240) for i in ids))
        return [r.status for r in done]

    def finished() -> int:
        return sum(1 for i in ids if "charge 2" in _effects(tmp_path, i))

    asyncio.run(submit())
    workers = {
        w: start(pg_dsn, tmp_path, w, "4", env={**FAST, "RUNS_WORKER": w})
        for w in ("w1", "w2", "w3")
    }
    try:
        end = time.monotonic() + 120
        while finished() < RUNS // 3 and time.monotonic() < end:
            time.sleep(0.05)
        kill(workers["w2"])
        # a worker that comes back with the dead one's id recovers the runs it held
        time.sleep(1)
        workers["w2"] = start(pg_dsn, tmp_path, "w2", "4", env={**FAST, "RUNS_WORKER": "w2b"})
        statuses = asyncio.run(results())
    finally:
        for proc in workers.values():
            stop(proc)
        executor.close()
    assert statuses == ["done"] * RUNS
    by: Counter[str] = Counter()
    for run_id in ids:
        lines = (tmp_path / f"{run_id}.effects").read_text(encoding="utf-8").splitlines()
        # each run charged exactly once for each charge, whatever worker ran it
        assert [line.rsplit(" by ", 1)[0] for line in lines] == ["charge 1", "charge 2"], run_id
        by.update(line.rsplit(" by ", 1)[1] for line in lines)
    # the runs were spread over the workers, the survivors going on after the kill
    assert by["w1"] > 0 and by["w2"] > 0 and by["w3"] > 0, by
    assert sum(by.values()) == 2 * RUNS


def _effects(logs: Path, run_id: str) -> str:
    path = logs / f"{run_id}.effects"
    return path.read_text(encoding="utf-8") if path.exists() else ""
