"""Worker threads for blocking tool calls: a lighter hop than ``asyncio.to_thread``.

``asyncio.to_thread`` goes through the loop's default executor: a ``concurrent.futures``
future, chained to an asyncio future by callbacks, for every call. A blocking tool's call here
is one job on a queue that idle threads wait on, answered with one ``call_soon_threadsafe``,
in the caller's context (contextvars copied, as ``to_thread`` does). Threads are started as
calls need them, up to the default executor's limit (``min(32, CPUs + 4)``), and then wait for
the next job; calls beyond the limit wait in the queue for a free thread. A forked child starts
with no threads of its own and makes them anew.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any
from typing import TypeVar

T = TypeVar("T")

#: Threads at most, as ``ThreadPoolExecutor``'s default.
LIMIT = min(32, (os.cpu_count() or 1) + 4)

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[[], Any]]


class _Pool:
    """Daemon threads taking jobs from one queue; ``idle`` counts those free to take one."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.idle = 0
        self.threads = 0

    def submit(self, job: _Job) -> None:
        with self.lock:
            if self.idle:
                self.idle -= 1  # a waiting thread takes it
            elif self.threads < self.limit:
                self.threads += 1
                threading.Thread(target=self._serve, name="agentkit-tool", daemon=True).start()
        self.jobs.put(job)

    def _serve(self) -> None:
        while True:
            loop, future, call = self.jobs.get()
            # free before the caller is woken: its next call finds this thread, not a new one
            answer(loop, future, call, self._free)
            del loop, future, call  # hold nothing while idle

    def _free(self) -> None:
        with self.lock:
            self.idle += 1


_pool = _Pool(LIMIT)


def _fresh_pool() -> None:
    global _pool
    _pool = _Pool(LIMIT)


if hasattr(os, "register_at_fork"):  # the parent's threads do not exist in a forked child
    os.register_at_fork(after_in_child=_fresh_pool)


def answer(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    call: Callable[[], Any],
    done: Callable[[], None] | None = None,
) -> None:
    """Run ``call`` on this (worker) thread and settle ``future`` with it on ``loop``.

    What ``call`` raises is handed to the awaiting task and raised there; a closed loop means
    nobody waits any more. ``done``, if given, is called once ``call`` has returned, before
    the loop is woken.
    """
    try:
        result, error = call(), None
    except BaseException as exc:
        result, error = None, exc
    if done is not None:
        done()
    try:
        loop.call_soon_threadsafe(_settle, future, result, error)
    except RuntimeError:
        pass


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


async def run_in_thread(fn: Callable[..., T], /, *args: object, **kwargs: object) -> T:
    """``fn(*args, **kwargs)`` on a worker thread, in a copy of the caller's context.

    What ``asyncio.to_thread`` does, with one queue hop each way. Cancelling the awaiting task
    does not stop the call (no thread can be interrupted); its result is dropped.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()
    _pool.submit((loop, future, lambda: context.run(fn, *args, **kwargs)))
    return await future
