"""Throughput: runs/s with 1, 2 and 4 worker processes on one PostgreSQL queue.

A throwaway PostgreSQL cluster (``.ci/pgcluster.py``), a fresh database per measurement; RUNS
runs of the workload are enqueued from this process (a DBOS client), then the workers start,
and the clock runs until every result is in. Each worker runs 8 runs at once. Measured with an
instant model (CPU-bound) and with a 50 ms model (latency-bound). Prints one JSON line per case.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".ci"))

from pgcluster import PgCluster  # noqa: E402

RUNS = 200
WORKERS = (1, 2, 4)
LATENCIES = (0.0, 0.05)


def measure(cluster: PgCluster, workers: int, latency: float, n: int) -> float:
    from agentkit_executor_dbos import DBOSExecutor

    database = f"bench_{n}"
    with psycopg.connect(cluster.dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {database}")
    dsn = cluster.dsn.rsplit("/", 1)[0] + "/" + database
    executor = DBOSExecutor(database=dsn, queue="bench")
    ids = [f"run-{i}" for i in range(RUNS)]

    async def submit() -> None:
        for run_id in ids:
            await executor.submit("add", agent="bench", run_id=run_id)

    async def wait() -> None:
        await asyncio.gather(*(executor.handle(i).result(timeout=600) for i in ids))

    asyncio.run(submit())
    here = Path(__file__).parent
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, str(here / "worker.py"), dsn, f"w{i}", "8", str(latency)],
            cwd=here,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(workers)
    ]
    try:
        asyncio.run(wait())
        elapsed = time.perf_counter() - start
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        executor.close()
    return RUNS / elapsed


def main() -> None:
    cluster = PgCluster()
    cluster.start()
    try:
        n = 0
        for latency in LATENCIES:
            rates: dict[int, float] = {}
            for workers in WORKERS:
                n += 1
                rates[workers] = measure(cluster, workers, latency, n)
            for workers, rate in rates.items():
                line = {
                    "bench": "throughput",
                    "model_latency_s": latency,
                    "workers": workers,
                    "runs": RUNS,
                    "runs_per_s": round(rate, 2),
                    "vs_one_worker": round(rate / rates[1], 2),
                }
                print(json.dumps(line), flush=True)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
