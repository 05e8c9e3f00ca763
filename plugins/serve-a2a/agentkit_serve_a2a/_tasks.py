"""The SDK's ``VersionedTaskStore`` over the kit's session store, shared by every process.

Each process sees every task, and a cancel on one reaches the run on another.
A task is a session of its own (``a2a-task:<id>``, header metadata ``{"a2a": "task"}``): each
save appends ``{"version": n, "task": ...}`` as an ``a2a/task`` item, so the leaf is the task
as it stands, and the session's compare-and-set append is the version check the SDK asks for
(a stale ``prev_version`` is a ``ConcurrentTaskModificationError``; the process running the task
sees a cancel written by another that way and stops). A delete appends an ``a2a/task-deleted``
item: sessions are append-only.
"""

from __future__ import annotations

from typing import Any

from a2a.server.cluster.task_store import ConcurrentTaskModificationError
from a2a.server.cluster.task_store import StoredTask
from a2a.server.cluster.task_store import VersionedTaskStore
from a2a.server.cluster.version import TaskVersion
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import ListTasksRequest
from a2a.types import ListTasksResponse
from a2a.types import Task
from a2a.types import TaskState
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from google.protobuf.json_format import ParseDict  # type: ignore[import-untyped]

from agentkit_core import SessionConflict
from agentkit_core import SessionNotFound
from agentkit_core import Sessions
from agentkit_core.plugin import NewItem

TASK, DELETED = "a2a/task", "a2a/task-deleted"
HEADER = {"metadata": {"a2a": "task"}}
PREFIX = "a2a-task:"
TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)


class SessionTaskStore(VersionedTaskStore):
    """A2A tasks kept in ``sessions``, one session per task, versioned by its saves."""

    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    async def save(
        self,
        task: Task,
        *,
        event: Any = None,
        prev: Task | None = None,
        prev_version: TaskVersion = TaskVersion.MISSING,
        context: ServerCallContext | None = None,
    ) -> TaskVersion:
        """Append the task after the version it was derived from (a cancel: after any)."""
        sid = PREFIX + task.id
        leaf = await self.leaf(sid)
        body = leaf.body if leaf is not None and leaf.kind == TASK else None
        stored = 0 if body is None else int(body["version"])
        if task.status.state == TaskState.TASK_STATE_CANCELED:
            # only the state is read, not the whole task: a save is on every streamed chunk
            state = None if body is None else body["task"].get("status", {}).get("state")
            if state is None or TaskState.Value(state) in TERMINAL:
                raise ConcurrentTaskModificationError(task.id)
        elif stored != version_of(prev_version):
            raise ConcurrentTaskModificationError(task.id)
        if leaf is None:
            try:
                leaf = await self.sessions.create(HEADER, session_id=sid)
            except SessionConflict:  # another process saved it first
                raise ConcurrentTaskModificationError(task.id) from None
        item = NewItem(TASK, {"version": stored + 1, "task": MessageToDict(task)})
        try:
            await self.sessions.append(sid, leaf.id, item)
        except SessionConflict:  # another process saved since our read
            raise ConcurrentTaskModificationError(task.id) from None
        return TaskVersion(stored + 1)

    async def get(
        self, task_id: str, context: ServerCallContext | None = None
    ) -> StoredTask | None:
        _, stored = await self.read(PREFIX + task_id)
        return None if stored is None else StoredTask(stored[1], TaskVersion(stored[0]))

    async def read(self, sid: str) -> tuple[Any, tuple[int, Task] | None]:
        """The task session's leaf (None if there is no session) and its task with version."""
        leaf = await self.leaf(sid)
        if leaf is None or leaf.kind != TASK:
            return leaf, None
        body = leaf.body
        return leaf, (int(body["version"]), ParseDict(body["task"], Task()))

    async def leaf(self, sid: str) -> Any:
        try:
            return await self.sessions.leaf(sid)
        except SessionNotFound:
            return None

    async def list(
        self, params: ListTasksRequest, context: ServerCallContext | None = None
    ) -> ListTasksResponse:
        """The SDK's own filtering and paging, over every task of the store."""
        found = InMemoryTaskStore()
        for info in await self.sessions.sessions():
            if info.id.startswith(PREFIX):
                stored = await self.get(info.id[len(PREFIX) :], context)
                if stored is not None:
                    await found.save(stored.task, context)  # type: ignore[arg-type]
        return await found.list(params, context)  # type: ignore[arg-type]

    async def delete(self, task_id: str, context: ServerCallContext | None = None) -> None:
        sid = PREFIX + task_id
        leaf, stored = await self.read(sid)
        if stored is not None:
            try:
                await self.sessions.append(sid, leaf.id, NewItem(DELETED, {}))
            except SessionConflict:  # saved meanwhile: delete what is there now
                await self.delete(task_id, context)


def version_of(version: TaskVersion) -> int:
    return 0 if version.is_missing else int(version._value)  # no public reader
