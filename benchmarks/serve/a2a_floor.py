"""A2A's floor: the same server with an executor that has no agent (the a2a-sdk's own path).

``stand_in`` enqueues what ``KitExecutor`` enqueues for the benchmark's answer (the task,
already ``working``, the answer's chunk, the last empty chunk, ``completed``), with no session
and no run: what is left of a request is the SDK's request handler, its event queue and
consumer, the task store's saves, the JSON-RPC and SSE encoding, uvicorn and the client. Used
by ``bench_agentkit.py`` (the ``a2a_floor`` rows) and ``timeline.py --stand-in``.
"""

from __future__ import annotations

import contextlib
from typing import Any
from unittest import mock

from a2a.server.agent_execution import AgentExecutor
from a2a.server.tasks import InMemoryTaskStore
from a2a.server.tasks import TaskUpdater
from a2a.types import Task
from a2a.types import TaskState
from a2a.types import TaskStatus
from agentkit_serve_a2a import _app
from agentkit_serve_a2a import a2a_app
from agentkit_serve_a2a._executor import chunk
from common import ANSWER


async def stand_in(self: Any, context: Any, queue: Any) -> None:
    """The events agentkit's executor sends for the answer, without an agent behind them."""
    updater = TaskUpdater(queue, context.task_id, context.context_id)
    working = TaskStatus(state=TaskState.TASK_STATE_WORKING)
    task = Task(id=context.task_id, context_id=context.context_id, status=working)
    task.history.append(context.message)
    await queue.enqueue_event(task)
    await chunk(updater, ANSWER, append=False, last=False)
    await chunk(updater, "", append=True, last=True)
    await updater.complete()


class StandIn(AgentExecutor):
    """``KitExecutor``'s place in ``a2a_app``, with ``stand_in`` for its work."""

    def __init__(self, kit: Any) -> None:
        self.kit = kit

    execute = stand_in

    async def cancel(self, context: Any, event_queue: Any) -> None:
        raise NotImplementedError("the stand-in's answers end before a cancel can come")


def floor_app(kit: Any, url: str, *, sdk_store: bool = False) -> Any:
    """``a2a_app(kit, url)`` with ``StandIn`` as its executor; with ``sdk_store``, the SDK's
    ``InMemoryTaskStore`` in place of the session store's (the store's own share)."""
    with contextlib.ExitStack() as patched:
        patched.enter_context(mock.patch.object(_app, "KitExecutor", StandIn))
        if sdk_store:
            memory = mock.patch.object(_app, "SessionTaskStore", lambda s: InMemoryTaskStore())
            patched.enter_context(memory)
        return a2a_app(kit, url)
