"""Three worker processes on one PostgreSQL queue; one is killed midway and not restarted."""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from pathlib import Path

from agentkit_executor_dbos import DBOSExecutor
from workers import kill
from workers import start
from workers import stop

from agentkit_core import AgentResult

RUNS = 100
#: fast steps; beats fast enough for a test, with room for a loaded machine's stalls
FAST = {"RUNS_DELAY": "0.02", "RUNS_HEARTBEAT": "0.25", "RUNS_TAKEOVER_AFTER": "3"}
SURVIVORS = {"w1", "w3"}


def test_three_workers_share_a_queue_and_a_killed_ones_runs_complete_once(
    pg_dsn: str, tmp_path: Path
) -> None:
    executor = DBOSExecutor(database=pg_dsn, queue="runs")
    ids = [f"pg-{i}" for i in range(RUNS)]

    async def submit() -> None:
        for run_id in ids:
            await executor.submit("charge twice", agent="runs", run_id=run_id)

    async def results() -> list[AgentResult]:
        return list(await asyncio.gather(*(executor.handle(i).result(timeout=240) for i in ids)))

    def finished() -> int:
        return sum(1 for i in ids if "charge 2" in _effects(tmp_path, i))

    def worked(worker: str) -> bool:
        return any(f" by {worker}\n" in _effects(tmp_path, i) for i in ids)

    async def held(worker: str) -> list[str]:
        """The runs ``worker`` holds unfinished."""
        pending = await executor.client().list_workflows_async(
            status="PENDING", executor_id=worker, load_input=False, load_output=False
        )
        return [w.workflow_id for w in pending]

    async def finishers(run_ids: list[str]) -> dict[str, tuple[str, str]]:
        """Each run's status and the worker that ran it last."""
        done = await executor.client().list_workflows_async(
            workflow_ids=run_ids, load_input=False, load_output=False
        )
        return {w.workflow_id: (str(w.status), str(w.executor_id)) for w in done}

    asyncio.run(submit())
    workers = {
        w: start(pg_dsn, tmp_path, w, "4", env={**FAST, "RUNS_WORKER": w})
        for w in ("w1", "w2", "w3")
    }
    try:
        end = time.monotonic() + 120
        # on a loaded machine a worker can start late: kill w2 once it has done some work
        while (finished() < RUNS // 3 or not worked("w2")) and time.monotonic() < end:
            time.sleep(0.05)
        # freeze w2 and read what it holds; kill it holding some (between runs it holds none),
        # so the survivors have runs to take over; it is not restarted
        while True:
            workers["w2"].send_signal(signal.SIGSTOP)
            orphans = asyncio.run(held("w2"))
            if orphans or time.monotonic() > end:
                break
            workers["w2"].send_signal(signal.SIGCONT)
            time.sleep(0.02)
        kill(workers["w2"])
        done = asyncio.run(results())
        ended = asyncio.run(finishers(orphans))
    finally:
        for proc in workers.values():
            stop(proc)
        executor.close()
    assert [r.status for r in done] == ["done"] * RUNS
    by: Counter[str] = Counter()
    told_unknown = 0
    for run_id, run in zip(ids, done, strict=True):
        lines = _effects(tmp_path, run_id).splitlines()
        charges = [line.rsplit(" by ", 1)[0] for line in lines]
        unknown = [m for m in run.transcript if m.role == "tool" and "unknown" in m.content]
        # no charge ever ran twice, whatever worker ran it; a charge the kill cut off mid-call
        # was not run again: the model was told its outcome is unknown (it may have acted)
        assert sorted(set(charges)) == charges, run_id
        assert set(charges) <= {"charge 1", "charge 2"}, run_id
        assert len(charges) == 2 or (len(charges) == 1 and len(unknown) == 1), (run_id, charges)
        told_unknown += len(unknown)
        by.update(line.rsplit(" by ", 1)[1] for line in lines)
    # only the calls in flight on the killed worker (it runs 4 at a time) can be unknown
    assert told_unknown <= 4
    # the runs were spread over the workers, the survivors going on after the kill
    assert by["w1"] > 0 and by["w2"] > 0 and by["w3"] > 0, by
    # the runs the killed worker held were finished by the survivors, with no restart
    assert 0 < len(orphans) <= 4, orphans
    assert all(s == "SUCCESS" and w in SURVIVORS for s, w in ended.values()), ended


def _effects(logs: Path, run_id: str) -> str:
    path = logs / f"{run_id}.effects"
    return path.read_text(encoding="utf-8") if path.exists() else ""
