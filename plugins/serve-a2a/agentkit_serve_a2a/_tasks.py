"""The SDK's ``VersionedTaskStore`` over the kit's session store, shared by every process.

Each process sees every task, and a cancel on one reaches the run on another.
A task is a session of its own (``a2a-task:<id>``, header metadata ``{"a2a": "task"}``). Its
first save appends the whole task, ``{"version": 1, "task": ...}``, as an ``a2a/task`` item;
each later save appends only what it changed, ``{"version": n, "delta": ...}`` (``_delta``), as
an ``a2a/task-delta`` item: the SDK saves the whole task on every streamed chunk, and storing it
whole each time wrote O(N^2) bytes for N chunks. A change a delta cannot express is stored whole
again. The task is the last whole one with the deltas after it applied; a process keeps the
tasks it saved or read last, so a save reads nothing back. The session's compare-and-set
append is the version check the SDK asks for (a stale ``prev_version``, or a write by another
process since, is a ``ConcurrentTaskModificationError``; the process running the task sees a
cancel written by another that way and stops). A delete appends an ``a2a/task-deleted`` item:
sessions are append-only. Tasks stored whole on every save (before the deltas) read as they did.
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

from ._delta import apply
from ._delta import delta

TASK, DELTA, DELETED = "a2a/task", "a2a/task-delta", "a2a/task-deleted"
#: how many tasks a process remembers as last stored (their next save reads no items back)
REMEMBERED = 1024
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
        #: task session id -> (leaf id, version, task) of the tasks this process saved or
        #: read last: a save diffs against it without reading the session's items back
        self.known: dict[str, tuple[str, int, Task]] = {}

    async def save(
        self,
        task: Task,
        *,
        event: Any = None,
        prev: Task | None = None,
        prev_version: TaskVersion = TaskVersion.MISSING,
        context: ServerCallContext | None = None,
    ) -> TaskVersion:
        """Append what changed after the version it was derived from (a cancel: after any).

        After a save or read of this process the leaf is not read again: the append's
        compare-and-set refuses it if another process wrote since (a store round trip less per
        streamed event). A cancel reads the leaf, as it is written after whatever is there.
        """
        sid = PREFIX + task.id
        canceling = task.status.state == TaskState.TASK_STATE_CANCELED
        leaf_id, stored = await self.last(sid, fresh=canceling)
        version = 0 if stored is None else stored[0]
        if canceling:
            if stored is None or stored[1].status.state in TERMINAL:
                raise ConcurrentTaskModificationError(task.id)
        elif version != version_of(prev_version):
            raise ConcurrentTaskModificationError(task.id)
        if leaf_id is None:
            try:
                leaf_id = (await self.sessions.create(HEADER, session_id=sid)).id
            except SessionConflict:  # another process saved it first
                raise ConcurrentTaskModificationError(task.id) from None
        changed = None if stored is None else delta(stored[1], task)
        if changed is None:
            item = NewItem(TASK, {"version": version + 1, "task": MessageToDict(task)})
        else:
            item = NewItem(DELTA, {"version": version + 1, "delta": changed})
        try:
            (made,) = await self.sessions.append(sid, leaf_id, item)
        except SessionConflict:  # another process saved since: read it again next time
            self.known.pop(sid, None)
            raise ConcurrentTaskModificationError(task.id) from None
        self.remember(sid, made.id, version + 1, task)
        return TaskVersion(version + 1)

    async def last(self, sid: str, *, fresh: bool) -> tuple[str | None, tuple[int, Task] | None]:
        """The leaf's id and the task there: as this process last saw it unless ``fresh``."""
        known = None if fresh else self.known.get(sid)
        if known is not None:
            return known[0], known[1:]
        leaf, stored = await self.read(sid)
        return (None if leaf is None else leaf.id), stored

    async def get(
        self, task_id: str, context: ServerCallContext | None = None
    ) -> StoredTask | None:
        _, stored = await self.read(PREFIX + task_id)
        if stored is None:
            return None
        copy = Task()
        copy.CopyFrom(stored[1])  # the caller may change it; the one remembered stays
        return StoredTask(copy, TaskVersion(stored[0]))

    async def read(self, sid: str) -> tuple[Any, tuple[int, Task] | None]:
        """The task session's leaf (None if there is no session) and its task with version.

        The task is the one remembered when the leaf is the item this process wrote or read
        last; otherwise it is rebuilt from the session's items: the last whole task (each
        task's first save, and every save stored before deltas) and the deltas after it.
        """
        leaf = await self.leaf(sid)
        if leaf is None or leaf.kind not in (TASK, DELTA):
            self.known.pop(sid, None)
            return leaf, None
        known = self.known.get(sid)
        if known is not None and known[0] == leaf.id:
            return leaf, known[1:]
        task = Task()
        for item in await self.sessions.path(sid, to=leaf.id):
            if item.kind == TASK:
                task = ParseDict(item.body["task"], Task())
            elif item.kind == DELTA:
                apply(task, item.body["delta"])
        version = int(leaf.body["version"])
        self.remember(sid, leaf.id, version, task)
        return leaf, (version, task)

    def remember(self, sid: str, leaf_id: str, version: int, task: Task) -> None:
        """Keep a copy of the task as stored at ``leaf_id``; forget the oldest past the bound."""
        copy = Task()
        copy.CopyFrom(task)
        self.known.pop(sid, None)
        self.known[sid] = (leaf_id, version, copy)
        if len(self.known) > REMEMBERED:
            del self.known[next(iter(self.known))]

    async def leaf(self, sid: str) -> Any:
        try:
            return await self.sessions.leaf(sid)
        except SessionNotFound:
            return None

    async def list(
        self, params: ListTasksRequest, context: ServerCallContext | None = None
    ) -> ListTasksResponse:
        """The SDK's own filtering and paging, over every task of the store.

        The session store's seam lists every session and nothing narrower (no listing by id
        prefix or by header metadata), so this reads every session's summary and each task's
        items: a cost in the store's size, paid only by ``ListTasks``.
        """
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
        self.known.pop(sid, None)  # a save after the delete writes after its item
        if stored is not None:
            try:
                await self.sessions.append(sid, leaf.id, NewItem(DELETED, {}))
            except SessionConflict:  # saved meanwhile: delete what is there now
                await self.delete(task_id, context)


def version_of(version: TaskVersion) -> int:
    return 0 if version.is_missing else int(version._value)  # no public reader
