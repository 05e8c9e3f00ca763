"""Several processes on one SQLite file: a writer killed mid-stream, and concurrent writers."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from pathlib import Path

import pytest

from agentkit_core import open_checkpointer

WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from agentkit_core import PluginManager, open_checkpointer

    async def main(url, run, count):
        async with await open_checkpointer(url, manager=PluginManager()) as cp:
            for i in range(count):
                state = {"i": i, "pad": "x" * 2000, "who": sys.argv[4]}
                written = await cp.snapshot(run, state)
                print(written.version, flush=True)

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


def start_writer(tmp_path: Path, url: str, run: str, count: int, who: str) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    if not script.exists():  # never rewritten under a starting child
        script.write_text(WRITER, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), url, run, str(count), who],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_a_writer_killed_mid_stream_loses_nothing_it_reported(tmp_path: Path, pm) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    child = start_writer(tmp_path, url, "crash", 100_000, "child")
    assert child.stdout is not None
    reported: list[int] = []
    deadline = time.monotonic() + 60
    while len(reported) < 40 and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        reported.append(int(line))
    os.kill(child.pid, signal.SIGKILL)
    rest, err = child.communicate(timeout=30)
    reported += [int(v) for v in rest.split()]  # printed before the kill landed
    assert child.returncode == -signal.SIGKILL, err
    assert len(reported) >= 40, err
    async with await open_checkpointer(url, manager=pm) as cp:
        versions = await cp.list_versions("crash")
        assert versions == list(range(1, len(versions) + 1))
        assert set(reported) <= set(versions)
        for v in reported:
            got = await cp.at_version("crash", v)
            assert got is not None and got.state["i"] == v - 1
        more = await cp.snapshot("crash", {"after": "crash"})
        assert more.version == versions[-1] + 1
    with closing(sqlite3.connect(tmp_path / "runs.db")) as conn, conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


@pytest.mark.parametrize("writes", ["thread", "inline"])
async def test_four_processes_on_one_run_get_versions_1_to_n(
    tmp_path: Path, writes: str, pm
) -> None:
    url = f"sqlite:///{tmp_path}/runs.db?synchronous=normal&writes={writes}"
    per_writer = 30
    children = [start_writer(tmp_path, url, "shared", per_writer, f"w{i}") for i in range(4)]
    outputs = await asyncio.gather(
        *(asyncio.to_thread(c.communicate, timeout=120) for c in children)
    )
    for child, (_, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
    reported = sorted(int(v) for out, _ in outputs for v in out.split())
    total = 4 * per_writer
    assert reported == list(range(1, total + 1))  # no version reported twice, none skipped
    async with await open_checkpointer(url, manager=pm) as cp:
        assert await cp.list_versions("shared") == list(range(1, total + 1))
        writers = []
        for v in range(1, total + 1):
            got = await cp.at_version("shared", v)
            assert got is not None
            writers.append((got.state["who"], got.state["i"]))
        assert sorted(writers) == sorted((f"w{w}", i) for w in range(4) for i in range(per_writer))
