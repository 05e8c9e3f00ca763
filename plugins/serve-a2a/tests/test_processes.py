"""Two ``agentkit serve --protocol a2a`` processes on one PostgreSQL store, over real HTTP.

A context alternates between them and its session stays one chain with every turn in order;
two messages at once on one context, one to each process: one task fails with a
``SessionConflict`` (or they run one after the other), and the record never interleaves them.
A task started on one process is read and cancelled on the other (the tasks are kept in the
session store). The servers and their gated tool are ``.ci/serveprocs.py``'s.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig
from a2a.client import create_client
from a2a.types import CancelTaskRequest
from a2a.types import GetTaskRequest
from a2a.types import ListTasksRequest
from a2a.types import Message as A2AMessage
from a2a.types import Part
from a2a.types import Role
from a2a.types import SendMessageRequest
from a2a.types import TaskState
from serveprocs import never_interleaved
from serveprocs import open_gate
from serveprocs import recorded


@pytest.fixture
def servers(launch: Callable[..., list[str]]) -> list[str]:
    return launch("a2a")


async def send(url: str, context: str, text: str, task: str = "") -> tuple[Any, str]:
    """A message on ``context`` (``task``) through the a2a-sdk client: the task's last status
    and its text."""
    message = A2AMessage(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        context_id=context,
        task_id=task,
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
    assert [i.body["message"].text for i in path if i.kind == "user"] == turns


async def test_simultaneous_messages_on_one_context_never_interleave(
    servers: list[str], pg_dsn: str, tmp_path: Path
) -> None:
    context = f"both-{uuid.uuid4().hex}"
    sent = [asyncio.create_task(send(url, context, f"from {url}")) for url in servers]
    await open_gate(tmp_path, sent)
    ends = await asyncio.gather(*sent)
    completed = [said for state, said in ends if state == TaskState.TASK_STATE_COMPLETED]
    failed = [said for state, said in ends if state == TaskState.TASK_STATE_FAILED]
    assert len(completed) == 2 or (len(completed), len(failed)) == (1, 1), ends
    assert all(said.startswith("SessionConflict: ") for said in failed), failed
    # a refused run may have begun (its task) before the other overtook it, never after
    path = await recorded(pg_dsn, context)
    assert len(never_interleaved(path)) in (1, 2) and path[-1].kind == "response", path


async def test_a_task_is_read_and_cancelled_by_the_other_process(
    servers: list[str], tmp_path: Path
) -> None:
    context = f"task-{uuid.uuid4().hex}"
    started = asyncio.create_task(send(servers[0], context, "wait on A"))
    entered = tmp_path / "entered" / "A"
    while not entered.exists():  # the run is in its gated tool on A
        assert not started.done(), started.result()
        await asyncio.sleep(0.02)
    async with httpx.AsyncClient(timeout=30) as http:
        b = await create_client(servers[1], ClientConfig(httpx_client=http, streaming=True))
        try:
            listed = await b.list_tasks(ListTasksRequest(context_id=context))
            (task,) = listed.tasks
            got = await b.get_task(GetTaskRequest(id=task.id))
            assert got.context_id == context
            assert got.status.state == TaskState.TASK_STATE_WORKING
            canceled = await b.cancel_task(CancelTaskRequest(id=task.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            (tmp_path / "gate").touch()
            state, _ = await asyncio.wait_for(started, 30)
            # A saw the cancel on its next save: the run stopped, the task stays canceled
            assert state == TaskState.TASK_STATE_CANCELED
            got = await b.get_task(GetTaskRequest(id=task.id))
            assert got.status.state == TaskState.TASK_STATE_CANCELED
        finally:
            await b.close()


async def test_an_approval_asked_on_one_process_is_answered_on_the_other(
    launch: Callable[..., list[str]], tmp_path: Path
) -> None:
    (tmp_path / "policy.toml").write_text('[[rules]]\nverdict = "ask"\ntool = "wait"\n')
    (tmp_path / "agentkit.toml").write_text('[kit]\npolicy = "policy.toml"\n')
    a, b = launch("a2a", "--kit", str(tmp_path / "agentkit.toml"))
    (tmp_path / "gate").touch()
    context = f"ask-{uuid.uuid4().hex}"
    state, said = await send(a, context, "wait, once approved")
    assert state == TaskState.TASK_STATE_INPUT_REQUIRED and said.startswith("approve wait("), said
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(b, ClientConfig(httpx_client=http))
        try:
            (task,) = (await client.list_tasks(ListTasksRequest(context_id=context))).tasks
        finally:
            await client.close()
    state, said = await send(b, context, "yes", task.id)
    assert state == TaskState.TASK_STATE_COMPLETED, said
    assert [p.name for p in (tmp_path / "entered").iterdir()] == ["B"]  # the tool ran on B
