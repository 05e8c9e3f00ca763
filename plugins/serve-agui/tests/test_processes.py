"""Two ``agentkit serve --protocol agui`` processes on one PostgreSQL store, over real HTTP.

A thread alternates between them and its session stays one chain with every turn in order;
two simultaneous requests on one thread, one to each process, never interleave in the record:
one is refused with a ``SessionConflict``, or they run one after the other. The servers and
their gated tool are ``.ci/serveprocs.py``'s.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from serveprocs import never_interleaved
from serveprocs import open_gate
from serveprocs import recorded


@pytest.fixture
def servers(launch: Callable[..., list[str]]) -> list[str]:
    return launch("agui")


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
    users = [i for i, item in enumerate(path) if item.kind == "user"]
    assert len(users) == 4 and path[0].kind == "header"
    # the first turn called the tool on server A (the later ones answered from the transcript)
    assert [item.kind for item in path[users[0] : users[1]]].count("tool_result") == 1


async def test_simultaneous_requests_on_one_thread_never_interleave(
    servers: list[str], pg_dsn: str, tmp_path: Path
) -> None:
    """Both sent at once: the store's compare-and-set on the leaf lets one of them go on."""
    thread = f"both-{uuid.uuid4().hex}"
    runs = [asyncio.create_task(run(url, thread, f"from {url}")) for url in servers]
    await open_gate(tmp_path, runs)
    ends = [events[-1] for events in await asyncio.gather(*runs)]
    outcomes = sorted((e["type"], e.get("code")) for e in ends)
    assert outcomes in (
        [("RUN_ERROR", "SessionConflict"), ("RUN_FINISHED", None)],
        [("RUN_FINISHED", None), ("RUN_FINISHED", None)],  # serialised: one after the other
    ), ends
    # a refused run may have begun (its task) before the other overtook it, never after
    path = await recorded(pg_dsn, thread)
    assert len(never_interleaved(path)) in (1, 2) and path[-1].kind == "response", path


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
    assert [i.kind for i in path if i.body.get("run") == a] == ["user", "response"]
    assert [i.kind for i in path if i.body.get("run") == b] == [
        *("user", "response", "tool_result", "response")
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
    a, b = launch("agui")
    thread = f"held-{uuid.uuid4().hex}"
    held = (await run(a, thread, "wait"))[-1]
    assert held["outcome"]["type"] == "interrupt", held
    (interrupt,) = held["outcome"]["interrupts"]
    answer = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {}}]
    done = await run(b, thread, None, messages=[], resume=answer)
    (result,) = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert result["content"] == "opened on B" and done[-1]["type"] == "RUN_FINISHED"
    assert len(never_interleaved(await recorded(pg_dsn, thread))) == 1
