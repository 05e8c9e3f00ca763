"""Two ``agentkit serve --protocol agui`` processes on one PostgreSQL store, over real HTTP.

A thread alternates between them and its session stays one chain with every turn in order;
two simultaneous requests on one thread, one to each process, never interleave in the record:
one is refused with a ``SessionConflict``, or they run one after the other.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentkit_core import open_sessions

#: The tool the built-in test model calls once per thread: it marks its server as in the tool
#: (a file in $ENTERED), then waits for the file $GATE.
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


def start(name: str, where: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    """``agentkit serve`` as its own process on port 0, and the URL its ready line names."""
    argv = [sys.executable, "-m", "agentkit_core", "serve", "--protocol", "agui", "--port", "0"]
    argv += ["--model", "test", "--tools", "gate_tools:wait", *options]
    env = {
        **os.environ,
        "SERVER": name,
        "GATE": str(where / "gate"),
        "ENTERED": str(where / "entered"),
    }
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=where, env=env)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if not line.startswith("agentkit: serving agui on http://127.0.0.1:"):
        proc.kill()
        pytest.fail(f"server {name} did not start: {line}{proc.communicate()[1]}")
    return proc, line.split(" on ", 1)[1].strip()


@pytest.fixture
def launch(pg_dsn: str, tmp_path: Path) -> Iterator[Callable[..., list[str]]]:
    """``launch(*options)``: the URLs of two server processes, A and B, on one store."""
    (tmp_path / "gate_tools.py").write_text(TOOLS)
    (tmp_path / "entered").mkdir()
    started: list[subprocess.Popen[str]] = []

    def both(*options: str) -> list[str]:
        urls = []
        for name in "AB":
            proc, url = start(name, tmp_path, "--store", pg_dsn, *options)
            started.append(proc)
            urls.append(url)
        return urls

    try:
        yield both
    finally:
        for proc in started:
            proc.terminate()
            proc.communicate(timeout=10)


@pytest.fixture
def servers(launch: Callable[..., list[str]]) -> list[str]:
    return launch()


def run_input(thread: str, text: str) -> dict[str, Any]:
    message = {"id": uuid.uuid4().hex, "role": "user", "content": text}
    return {
        **{"threadId": thread, "runId": uuid.uuid4().hex, "messages": [message]},
        **{"state": None, "tools": [], "context": [], "forwardedProps": None},
    }


async def run(url: str, thread: str, text: str | None, **extra: Any) -> list[dict[str, Any]]:
    """The AG-UI events of one run on ``url``'s server, read from its SSE stream."""
    body = {**run_input(thread, text or ""), **extra}
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        async with http.stream("POST", "/agent", json=body) as response:
            assert response.status_code == 200, await response.aread()
            return [
                json.loads(line[len("data: ") :])
                async for line in response.aiter_lines()
                if line.startswith("data: ")
            ]


async def recorded(dsn: str, thread: str) -> list[tuple[str, Any]]:
    """The thread's session path as (kind, run) pairs, after checking it is one chain."""
    sessions = await open_sessions(dsn)
    try:
        path = await sessions.path(thread)  # checks each item's parent is the one before it
    finally:
        await sessions.aclose()
    return [(item.kind, item.body.get("run")) for item in path]


def never_interleaved(path: list[tuple[str, Any]]) -> list[Any]:
    """The runs of ``path`` in order, each run's items all together."""
    runs = [run for run, _ in groupby(run for _, run in path if run is not None)]
    assert len(runs) == len(set(runs)), f"the runs' items interleave: {path}"
    return runs


async def test_a_thread_alternates_between_two_server_processes(
    servers: list[str], pg_dsn: str, tmp_path: Path
) -> None:
    (tmp_path / "gate").touch()
    thread = f"alt-{uuid.uuid4().hex}"
    turns = [f"turn {i}" for i in range(4)]
    for i, turn in enumerate(turns):
        events = await run(servers[i % 2], thread, turn)
        assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    for url in servers:  # either process reads the same conversation, every turn in order
        async with httpx.AsyncClient(base_url=url, timeout=10) as http:
            messages = (await http.get(f"/threads/{thread}")).json()["messages"]
        assert [m["content"] for m in messages if m["role"] == "user"] == turns
    path = await recorded(pg_dsn, thread)
    assert len(never_interleaved(path)) == 4
    users = [i for i, (kind, _) in enumerate(path) if kind == "user"]
    assert len(users) == 4 and path[0][0] == "header"
    # the first turn called the tool on server A (the later ones answered from the transcript)
    assert [kind for kind, _ in path[users[0] : users[1]]].count("tool_result") == 1


async def test_simultaneous_requests_on_one_thread_never_interleave(
    servers: list[str], pg_dsn: str, tmp_path: Path
) -> None:
    """Both sent at once: the store's compare-and-set on the leaf lets one of them go on."""
    thread = f"both-{uuid.uuid4().hex}"
    runs = [asyncio.create_task(run(url, thread, f"from {url}")) for url in servers]
    entered = tmp_path / "entered"
    for _ in range(1500):  # both runs are in the tool, or one has already ended
        await asyncio.sleep(0.02)
        if len(list(entered.iterdir())) + sum(r.done() for r in runs) >= 2:
            break
    (tmp_path / "gate").touch()
    ends = [events[-1] for events in await asyncio.gather(*runs)]
    outcomes = sorted((e["type"], e.get("code")) for e in ends)
    assert outcomes in (
        [("RUN_ERROR", "SessionConflict"), ("RUN_FINISHED", None)],
        [("RUN_FINISHED", None), ("RUN_FINISHED", None)],  # serialised: one after the other
    ), ends
    # a refused run may have begun (its task) before the other overtook it, never after
    path = await recorded(pg_dsn, thread)
    assert len(never_interleaved(path)) in (1, 2) and path[-1][0] == "response", path


async def test_a_run_overtaken_on_the_other_process_fails_with_a_conflict(
    servers: list[str], pg_dsn: str, tmp_path: Path
) -> None:
    """A new message on B while A's run is in its tool: B's run goes on, A's fails at its next
    write, and the record holds A's begun run, then B's whole run after it."""
    thread = f"overtaken-{uuid.uuid4().hex}"
    entered = tmp_path / "entered"

    async def in_tool(name: str) -> None:
        while not (entered / name).exists():
            await asyncio.sleep(0.02)

    first = asyncio.create_task(run(servers[0], thread, "one"))
    await asyncio.wait_for(in_tool("A"), 30)
    second = asyncio.create_task(run(servers[1], thread, "two"))
    await asyncio.wait_for(in_tool("B"), 30)
    (tmp_path / "gate").touch()
    overtaken, went_on = (events[-1] for events in await asyncio.gather(first, second))
    assert (overtaken["type"], overtaken.get("code")) == ("RUN_ERROR", "SessionConflict")
    assert went_on["type"] == "RUN_FINISHED", went_on
    path = await recorded(pg_dsn, thread)
    a, b = never_interleaved(path)
    assert [kind for kind, run in path if run == a] == ["user", "response", "tool_call"]
    assert [kind for kind, run in path if run == b] == [
        *("user", "response", "tool_call", "tool_result", "response")
    ]
    async with httpx.AsyncClient(base_url=servers[0], timeout=10) as http:
        messages = (await http.get(f"/threads/{thread}")).json()["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["two"]


async def test_an_approval_held_on_one_process_is_answered_on_the_other(
    launch: Callable[..., list[str]], pg_dsn: str, tmp_path: Path
) -> None:
    """The held run is the session's: the other process resumes it from the store."""
    (tmp_path / "gate").touch()
    (tmp_path / "policy.toml").write_text('default = "ask"\n')
    (tmp_path / "agentkit.toml").write_text('[kit]\npolicy = "policy.toml"\n')
    a, b = launch()
    thread = f"held-{uuid.uuid4().hex}"
    held = (await run(a, thread, "wait"))[-1]
    assert held["outcome"]["type"] == "interrupt", held
    (interrupt,) = held["outcome"]["interrupts"]
    answer = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {}}]
    done = await run(b, thread, None, messages=[], resume=answer)
    (result,) = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert result["content"] == "opened on B" and done[-1]["type"] == "RUN_FINISHED"
    assert len(never_interleaved(await recorded(pg_dsn, thread))) == 1
