"""The task store: a task reads back as the SDK's own store keeps it, in bytes linear in its
chunks, a save reads nothing back yet sees another process's write, and tasks stored whole by
earlier versions still read."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from a2a.server.cluster.task_store import ConcurrentTaskModificationError
from a2a.server.cluster.version import TaskVersion
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.server.tasks.task_manager import append_artifact_to_task
from a2a.types import Artifact
from a2a.types import Message as A2AMessage
from a2a.types import Part
from a2a.types import Role
from a2a.types import Task
from a2a.types import TaskArtifactUpdateEvent
from a2a.types import TaskState
from a2a.types import TaskStatus
from agentkit_serve_a2a._tasks import TERMINAL
from agentkit_serve_a2a._tasks import SessionTaskStore
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import PluginManager
from agentkit_core import open_sessions
from agentkit_core.plugin import NewItem

CONTEXT = ServerCallContext()
#: the stores are looked up here, not through the pm fixture: a hypothesis test shares it
PM = PluginManager()
CANCELED = TaskState.TASK_STATE_CANCELED
#: the states a status update sets; a cancel is a step of its own (a write the store checks)
STATES = [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_INPUT_REQUIRED]
STATES += sorted(TERMINAL - {CANCELED})
words = st.text("abc xyz", max_size=6)
artifact_ids = st.sampled_from(["a1", "a2"])
steps = st.one_of(
    st.tuples(st.just("status"), st.sampled_from(STATES), st.none() | words),
    st.tuples(st.just("history"), words),
    st.tuples(
        st.just("artifact"), artifact_ids, st.booleans(), st.booleans(), st.lists(words, max_size=3)
    ),
    st.tuples(
        st.just("metadata"), st.dictionaries(st.sampled_from("kl"), words | st.integers(0, 9))
    ),
    st.tuples(st.just("cancel")),
)


def message(text: str) -> A2AMessage:
    return A2AMessage(message_id=text + "!", role=Role.ROLE_AGENT, parts=[Part(text=text)])


def step(task: Task, change: tuple[Any, ...]) -> bool:
    """Change ``task`` as the SDK's task manager would; False when the SDK would not save."""
    if task.status.state == CANCELED:
        return False  # a save of a canceled task is one more cancel, refused
    match change:
        case ("status", state, said):
            task.status.CopyFrom(TaskStatus(state=state))
            if said is not None:
                task.status.message.CopyFrom(message(said))
        case ("history", said):
            task.history.append(message(said))
        case ("artifact", artifact_id, append, last, texts):
            if append and artifact_id not in [a.artifact_id for a in task.artifacts]:
                return False  # the SDK refuses it
            artifact = Artifact(artifact_id=artifact_id, parts=[Part(text=t) for t in texts])
            artifact.metadata.update({"chunk": len(texts)})
            event = TaskArtifactUpdateEvent(artifact=artifact, append=append, last_chunk=last)
            append_artifact_to_task(task, event)
        case ("metadata", values):
            task.metadata.Clear()
            task.metadata.update(values)
        case ("cancel",):
            if task.status.state in TERMINAL:
                return False  # not cancelable
            task.status.state = CANCELED
    return True


@settings(max_examples=60, deadline=None)
@given(st.lists(steps, max_size=12))
def test_a_task_reads_back_as_the_sdks_own_store_keeps_it(changes: list[tuple[Any, ...]]) -> None:
    async def check() -> None:
        sessions = await open_sessions("memory://", manager=PM)
        store, elsewhere, theirs = SessionTaskStore(sessions), None, InMemoryTaskStore()
        task = Task(
            id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
        )
        version = await store.save(task, prev_version=TaskVersion.MISSING)
        await theirs.save(task, CONTEXT)
        for change in changes:
            if not step(task, change):
                continue
            version = await store.save(task, prev_version=version)
            await theirs.save(task, CONTEXT)
            expected = await theirs.get("t1", CONTEXT)
            elsewhere = SessionTaskStore(sessions)  # another process: rebuilt from the items
            for reader in (store, elsewhere):
                got = await reader.get("t1")
                assert got is not None
                assert (got.task, got.version) == (expected, version)
        await sessions.aclose()

    asyncio.run(check())


async def stored_bytes(path: Path, chunks: int) -> int:
    """The bytes of a task's items on SQLite after its answer streamed in ``chunks`` chunks."""
    sessions = await open_sessions(f"sqlite:///{path}", manager=PM)
    store = SessionTaskStore(sessions)
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    task.history.append(message("hello"))
    version = await store.save(task, prev_version=TaskVersion.MISSING)
    for n in range(chunks):
        artifact = Artifact(artifact_id="answer", parts=[Part(text=f"word{n} ")])
        event = TaskArtifactUpdateEvent(artifact=artifact, append=n > 0, last_chunk=False)
        append_artifact_to_task(task, event)
        version = await store.save(task, prev_version=version)
    task.status.state = TaskState.TASK_STATE_COMPLETED
    await store.save(task, prev_version=version)
    await sessions.aclose()
    with sqlite3.connect(path) as db:
        (size,) = db.execute(
            "SELECT sum(length(body)) FROM agentkit_session_items WHERE session_id = 'a2a-task:t1'"
        ).fetchone()
        (blobs,) = db.execute(
            "SELECT coalesce(sum(length(data)), 0) FROM agentkit_session_blobs"
        ).fetchone()
    return int(size) + int(blobs)


async def test_a_streamed_task_is_stored_in_bytes_linear_in_its_chunks(tmp_path: Path) -> None:
    n = await stored_bytes(tmp_path / "n.db", 200)
    twice = await stored_bytes(tmp_path / "2n.db", 400)
    assert twice <= 2.2 * n, (n, twice)


async def test_a_task_stored_whole_by_an_earlier_version_still_reads() -> None:
    sessions = await open_sessions("memory://", manager=PM)
    old = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    old.history.append(message("hi"))
    head = await sessions.create({"metadata": {"a2a": "task"}}, session_id="a2a-task:t1")
    body = {"version": 1, "task": MessageToDict(old)}
    await sessions.append("a2a-task:t1", head.id, NewItem("a2a/task", body))
    store = SessionTaskStore(sessions)
    got = await store.get("t1")
    assert got is not None and got.task == old
    old.status.state = TaskState.TASK_STATE_COMPLETED  # and a save goes on from it
    await store.save(old, prev_version=got.version)
    got = await SessionTaskStore(sessions).get("t1")
    assert got is not None and got.task == old and got.version == TaskVersion(2)
    await sessions.aclose()


async def test_a_save_reads_nothing_back_yet_a_write_by_another_process_is_refused(
    monkeypatch: Any,
) -> None:
    sessions = await open_sessions("memory://", manager=PM)
    here, there = SessionTaskStore(sessions), SessionTaskStore(sessions)
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    version = await here.save(task, prev_version=TaskVersion.MISSING)
    reads: list[str] = []
    for name in ("leaf", "path"):
        monkeypatch.setattr(sessions, name, counted(getattr(sessions, name), name, reads))
    task.history.append(message("hi"))
    version = await here.save(task, prev_version=version)
    assert reads == []  # its own last save is the leaf it appends after
    got = await there.get("t1")  # another process writes meanwhile
    assert got is not None
    got.task.metadata.update({"by": "there"})
    await there.save(got.task, prev_version=got.version)
    task.status.state = TaskState.TASK_STATE_COMPLETED
    with pytest.raises(ConcurrentTaskModificationError):
        await here.save(task, prev_version=version)
    got = await here.get("t1")  # as the SDK does then: read it again, and go on from it
    assert got is not None and got.task.metadata["by"] == "there"
    got.task.status.state = TaskState.TASK_STATE_COMPLETED
    await here.save(got.task, prev_version=got.version)
    assert (await there.get("t1")).task == got.task  # type: ignore[union-attr]
    await sessions.aclose()


async def test_a_task_saved_again_after_its_delete_starts_over() -> None:
    sessions = await open_sessions("memory://", manager=PM)
    store = SessionTaskStore(sessions)
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    await store.save(task, prev_version=TaskVersion.MISSING)
    await store.delete("t1")
    assert await SessionTaskStore(sessions).get("t1") is None
    task.history.append(message("again"))
    assert await store.save(task, prev_version=TaskVersion.MISSING) == TaskVersion(1)
    got = await SessionTaskStore(sessions).get("t1")
    assert got is not None and got.task == task
    await sessions.aclose()


def counted(read: Any, name: str, reads: list[str]) -> Any:
    async def reading(*args: Any, **kwargs: Any) -> Any:
        reads.append(name)
        return await read(*args, **kwargs)

    return reading
