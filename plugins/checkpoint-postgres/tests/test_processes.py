"""Real processes against the real server: a writer killed mid-stream, and four racing writers."""

from __future__ import annotations

import signal
import subprocess
import sys
import uuid
from pathlib import Path

from pgcluster import PgCluster

from agentkit_core import Checkpointer
from agentkit_core.plugin import open_checkpoint_store

WRITER = str(Path(__file__).with_name("pg_writer.py"))


def start_writer(dsn: str, run_id: str, count: int, name: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, WRITER, dsn, run_id, str(count), name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n", f"writer {name} did not start"
    return proc


def go(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()


async def test_every_version_a_killed_writer_was_given_survives_a_server_crash(
    pg_cluster: PgCluster,
    pm,
) -> None:
    run_id = f"crash-{uuid.uuid4().hex}"
    proc = start_writer(pg_cluster.dsn, run_id, 0, "w")
    assert proc.stdout is not None
    go(proc)
    printed: list[int] = []
    try:
        while len(printed) < 40:
            line = proc.stdout.readline()
            assert line, f"the writer died early (exit {proc.poll()})"
            printed.append(int(line))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdin.close()  # type: ignore[union-attr]
        # Versions it printed (acknowledged) before the kill but the test had not read yet: on a
        # busy machine the writer runs ahead of the reader.
        printed += [int(line) for line in proc.stdout.read().split()]
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert len(printed) >= 40 and printed == list(range(1, len(printed) + 1))
    # Then the server goes down without a shutdown checkpoint: what it acknowledged must be on disk.
    pg_cluster.restart()

    async with Checkpointer(
        await open_checkpoint_store(pg_cluster.dsn, manager=pm)
    ) as checkpointer:
        stored = await checkpointer.list_versions(run_id)
        # A snapshot in flight at the kill may have committed without being printed.
        assert stored[: len(printed)] == printed and len(stored) <= len(printed) + 1
        for version in stored:
            checkpoint = await checkpointer.at_version(run_id, version)
            assert checkpoint is not None
            assert checkpoint.state["i"] == version - 1
            assert checkpoint.state["text"] == "ünïcode ✓ " * 200
            assert checkpoint.metadata == {"writer": "w"}


async def test_four_processes_on_one_run_get_versions_one_to_n(pg_dsn: str, pm) -> None:
    run_id = f"race-{uuid.uuid4().hex}"
    per_writer = 25
    procs = {f"w{i}": start_writer(pg_dsn, run_id, per_writer, f"w{i}") for i in range(4)}
    for proc in procs.values():
        go(proc)
    given: dict[int, str] = {}
    for name, proc in procs.items():
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"writer {name} failed"
        versions = [int(line) for line in out.split()]
        assert len(versions) == per_writer
        assert versions == sorted(versions)  # each writer's versions climb
        for version in versions:
            assert version not in given, f"version {version} given to {given[version]} and {name}"
            given[version] = name
    total = 4 * per_writer
    assert sorted(given) == list(range(1, total + 1))

    async with Checkpointer(await open_checkpoint_store(pg_dsn, manager=pm)) as checkpointer:
        assert await checkpointer.list_versions(run_id) == list(range(1, total + 1))
        for version, name in given.items():
            checkpoint = await checkpointer.at_version(run_id, version)
            assert checkpoint is not None and checkpoint.state["writer"] == name
