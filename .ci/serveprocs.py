"""Two ``agentkit serve`` processes on one PostgreSQL store, for the server plugins' tests.

Each server runs the built-in test model with one tool, ``wait``, which the model calls once
per conversation: it marks its server as in the tool (a file named A or B in ``entered/``),
then waits for the file ``gate`` in the test's directory. A server plugin's ``conftest.py``
imports the ``launch`` fixture beside ``pgfixtures``'.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

from agentkit_core import PluginManager
from agentkit_core import open_sessions
from agentkit_core.plugin import SessionItem

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

TOOLS = '''
import asyncio, os
from pathlib import Path
from agentkit_core import tool

@tool
async def wait() -> str:
    """Wait for the gate."""
    (Path(os.environ["ENTERED"]) / os.environ["SERVER"]).touch()
    while not Path(os.environ["GATE"]).exists():
        await asyncio.sleep(0.02)
    return "opened on " + os.environ["SERVER"]
'''


def start(protocol: str, name: str, where: Path, *options: str) -> tuple[Any, str]:
    """``agentkit serve`` as its own process on port 0, and the URL its ready line names."""
    argv = [sys.executable, "-m", "agentkit_core", "serve", "--protocol", protocol]
    argv += ["--port", "0", "--model", "test", "--tools", "gate_tools:wait", *options]
    env = {
        **os.environ,
        "SERVER": name,
        "GATE": str(where / "gate"),
        "ENTERED": str(where / "entered"),
    }
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=where, env=env)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if not line.startswith(f"agentkit: serving {protocol} on http://127.0.0.1:"):
        proc.kill()
        pytest.fail(f"server {name} did not start: {line}{proc.communicate()[1]}")
    return proc, line.split(" on ", 1)[1].strip()


@pytest.fixture
def launch(pg_dsn: str, tmp_path: Path) -> Iterator[Callable[..., list[str]]]:
    """``launch(protocol, *options)``: the URLs of two servers, A and B, on one store."""
    (tmp_path / "gate_tools.py").write_text(TOOLS)
    (tmp_path / "entered").mkdir()
    started: list[Any] = []

    def both(protocol: str, *options: str) -> list[str]:
        urls = []
        for name in "AB":
            proc, url = start(protocol, name, tmp_path, "--store", pg_dsn, *options)
            started.append(proc)
            urls.append(url)
        return urls

    try:
        yield both
    finally:
        for proc in started:
            proc.terminate()
            proc.communicate(timeout=10)


async def open_gate(where: Path, sent: list[asyncio.Task[Any]]) -> None:
    """Open the gate once both requests are in the tool, or one of them has already ended."""
    for _ in range(1500):
        if len(list((where / "entered").iterdir())) + sum(s.done() for s in sent) >= 2:
            break
        await asyncio.sleep(0.02)
    (where / "gate").touch()


async def recorded(dsn: str, session_id: str) -> list[SessionItem]:
    """The session's path, checked to be one chain (each item's parent the one before it)."""
    sessions = await open_sessions(dsn, manager=PM)
    try:
        return await sessions.path(session_id)
    finally:
        await sessions.aclose()


def never_interleaved(path: list[SessionItem]) -> list[Any]:
    """The runs of ``path`` in order, after checking each run's items are all together."""
    runs = [run for run, _ in groupby(r for r in (i.body.get("run") for i in path) if r)]
    assert len(runs) == len(set(runs)), f"the runs' items interleave: {path}"
    return runs
