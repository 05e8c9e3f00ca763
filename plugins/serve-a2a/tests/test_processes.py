"""Two ``agentkit serve --protocol a2a`` processes on one PostgreSQL store, over real HTTP.

A context alternates between them and its session stays one chain with every turn in order;
two messages at once on one context, one to each process: one task fails with a
``SessionConflict`` (or they run one after the other), and the record never interleaves them.
Tasks themselves live in each process's task store: a task is read on the process that ran it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig
from a2a.client import create_client
from a2a.types import Message as A2AMessage
from a2a.types import Part
from a2a.types import Role
from a2a.types import SendMessageRequest
from a2a.types import TaskState

from agentkit_core import open_sessions

#: The tool the built-in test model calls once per context: it marks its server as in the
#: tool (a file in $ENTERED), then waits for the file $GATE.
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


def start(name: str, dsn: str, where: Path) -> tuple[subprocess.Popen[str], str]:
    """``agentkit serve`` as its own process on port 0, and the URL its ready line names."""
    argv = [sys.executable, "-m", "agentkit_core", "serve", "--protocol", "a2a", "--port", "0"]
    argv += ["--store", dsn, "--model", "test", "--tools", "gate_tools:wait"]
    env = {
        **os.environ,
        "SERVER": name,
        "GATE": str(where / "gate"),
        "ENTERED": str(where / "entered"),
    }
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=where, env=env)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if not line.startswith("agentkit: serving a2a on http://127.0.0.1:"):
        proc.kill()
        pytest.fail(f"server {name} did not start: {line}{proc.communicate()[1]}")
    return proc, line.split(" on ", 1)[1].strip()


@pytest.fixture
def servers(pg_dsn: str, tmp_path: Path) -> Iterator[list[str]]:
    """The URLs of two server processes, A and B, on one PostgreSQL store."""
    (tmp_path / "gate_tools.py").write_text(TOOLS)
    (tmp_path / "entered").mkdir()
    started: list[subprocess.Popen[str]] = []
    try:
        urls = []
        for name in "AB":
            proc, url = start(name, pg_dsn, tmp_path)
            started.append(proc)
            urls.append(url)
        yield urls
    finally:
        for proc in started:
            proc.terminate()
            proc.communicate(timeout=10)


async def send(url: str, context: str, text: str) -> tuple[Any, str]:
    """A message on ``context`` through the a2a-sdk client: the task's last status, its text."""
    message = A2AMessage(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        context_id=context,
    )
    status, said = None, ""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(url, ClientConfig(httpx_client=http, streaming=True))
        try:
            async for response in client.send_message(SendMessageRequest(message=message)):
                if response.HasField("task"):
                    status = response.task.status
                if response.HasField("status_update"):
                    status = response.status_update.status
                    said = "".join(p.text for p in status.message.parts)
        finally:
            await client.close()
    assert status is not None
    return status.state, said


async def recorded(dsn: str, context: str) -> list[tuple[str, Any, str]]:
    """The context's session path as (kind, run, a user item's text), one chain checked."""
    sessions = await open_sessions(dsn)
    try:
        path = await sessions.path(context)  # checks each item's parent is the one before it
    finally:
        await sessions.aclose()
    return [
        (item.kind, item.body.get("run"), item.body["message"].text if item.kind == "user" else "")
        for item in path
    ]


def never_interleaved(path: list[tuple[str, Any, str]]) -> list[Any]:
    """The runs of ``path`` in order, each run's items all together."""
    runs = [run for run, _ in groupby(run for _, run, _ in path if run is not None)]
    assert len(runs) == len(set(runs)), f"the runs' items interleave: {path}"
    return runs


async def test_a_context_alternates_between_two_server_processes(
    servers: list[str], pg_dsn: str, tmp_path: Path
) -> None:
    (tmp_path / "gate").touch()
    context = f"alt-{uuid.uuid4().hex}"
    turns = [f"turn {i}" for i in range(4)]
    for i, turn in enumerate(turns):
        state, said = await send(servers[i % 2], context, turn)
        assert state == TaskState.TASK_STATE_COMPLETED, said
    path = await recorded(pg_dsn, context)
    assert len(never_interleaved(path)) == 4
    assert [text for kind, _, text in path if kind == "user"] == turns


async def test_simultaneous_messages_on_one_context_never_interleave(
    servers: list[str], pg_dsn: str, tmp_path: Path
) -> None:
    context = f"both-{uuid.uuid4().hex}"
    sent = [asyncio.create_task(send(url, context, f"from {url}")) for url in servers]
    entered = tmp_path / "entered"
    for _ in range(1500):  # both runs are in the tool, or one has already ended
        await asyncio.sleep(0.02)
        if len(list(entered.iterdir())) + sum(s.done() for s in sent) >= 2:
            break
    (tmp_path / "gate").touch()
    ends = await asyncio.gather(*sent)
    completed = [said for state, said in ends if state == TaskState.TASK_STATE_COMPLETED]
    failed = [said for state, said in ends if state == TaskState.TASK_STATE_FAILED]
    assert len(completed) == 2 or (len(completed), len(failed)) == (1, 1), ends
    assert all(said.startswith("SessionConflict: ") for said in failed), failed
    # a refused run may have begun (its task) before the other overtook it, never after
    path = await recorded(pg_dsn, context)
    assert len(never_interleaved(path)) in (1, 2) and path[-1][0] == "response", path
