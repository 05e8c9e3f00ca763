"""Total deadlines of model calls, with one timer per event loop for all of them.

``asyncio.timeout`` schedules a timer handle on entry and cancels it on exit: about 4 µs a
model call, most of a turn's deadline cost, for a deadline (ten minutes by default) that almost
never fires. Here a call only notes its task and due time in its loop's :class:`Watch` and
drops the note when it ends. The watch keeps one timer, armed at the earliest due time; when it
fires it cancels every call past its due time and re-arms for the next one still running, so
a call that ended long ago costs one wake-up at most. A call past its deadline is cancelled and
raises ``TimeoutError``, exactly as under ``asyncio.timeout`` (a cancellation from outside
stays a cancellation).
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections.abc import Awaitable
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class _Call:
    """One call in flight: its task, when it is due, and whether the watch cancelled it."""

    __slots__ = ("due", "expired", "task")
    task: asyncio.Task[object]
    due: float
    expired: bool


class Watch:
    """The calls in flight on one event loop, and the one timer that ends those overdue."""

    __slots__ = ("_armed", "_calls", "_handle")

    def __init__(self) -> None:
        self._calls: dict[_Call, None] = {}
        self._handle: asyncio.TimerHandle | None = None
        self._armed = 0.0

    async def within(
        self,
        loop: asyncio.AbstractEventLoop,
        task: asyncio.Task[object],
        call: Awaitable[T],
        seconds: float,
        overdue: Callable[[], BaseException] | None = None,
    ) -> T:
        """``await call`` in ``task`` on ``loop``, cancelled ``seconds`` from now.

        Like ``async with asyncio.timeout(seconds)``: the task is cancelled at the deadline
        and the cancellation becomes ``TimeoutError`` (``overdue()``, when given, raised
        from None) unless the task was also cancelled from outside. The watch holds no loop:
        the loop's timer holds the watch.
        """
        entry = _Call()  # no __init__ to call: a model call a turn makes one
        entry.task, entry.due, entry.expired = task, loop.time() + seconds, False
        calls = self._calls
        calls[entry] = None
        if self._handle is None or entry.due < self._armed:
            self._arm(loop, entry.due)
        cancelling = task.cancelling()
        try:
            result = await call
        except BaseException as exc:
            del calls[entry]
            if (
                entry.expired
                and task.uncancel() <= cancelling
                and isinstance(exc, asyncio.CancelledError)
            ):
                if overdue is not None:
                    raise overdue() from None
                raise TimeoutError from exc
            raise
        del calls[entry]
        if entry.expired:  # cancelled too late to stop it: take the request back
            task.uncancel()
        return result

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._armed = when
        self._handle = loop.call_at(when, self._fire, loop, when)

    def _fire(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        """The timer armed for ``when``: cancel every call due by then, re-arm for the next."""
        self._handle = None
        nearest: float | None = None
        for entry in self._calls:
            if entry.expired:
                continue
            if entry.due <= when:
                entry.expired = True
                entry.task.cancel()
            elif nearest is None or entry.due < nearest:
                nearest = entry.due
        if nearest is not None:
            self._arm(loop, nearest)


# asyncio.current_task() is Python code before 3.12 (about 0.4 µs, twice a turn): the C
# getters it calls, directly
_running_loop = asyncio.events._get_running_loop
if sys.version_info >= (3, 12):
    _task_of = asyncio.current_task
else:
    _task_of = asyncio.tasks._current_tasks.get  # type: ignore[attr-defined]

_watches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Watch] = weakref.WeakKeyDictionary()
#: The loop used last and its watch: a run's calls find it without a weak-key lookup.
_last: tuple[Callable[[], asyncio.AbstractEventLoop | None], Watch] = (
    lambda: None,
    Watch(),
)


def within(
    call: Awaitable[T], seconds: float, overdue: Callable[[], BaseException] | None = None
) -> Awaitable[T]:
    """``call`` ending within ``seconds`` or cancelled with ``TimeoutError``; await it at once.

    ``overdue`` makes the error raised past the deadline instead of ``TimeoutError`` (so a
    caller that names its own needs no coroutine around this one). The deadline is the
    current task's: the awaitable is meant for that task to await.
    """
    loop = _running_loop()
    if loop is None or (task := _task_of(loop)) is None:
        # no task to cancel: asyncio.timeout says so when entered
        return _named(_timeout(call, seconds), overdue)
    last_loop, watch = _last
    if last_loop() is not loop:
        watch = _watch_of(loop)
    return watch.within(loop, task, call, seconds, overdue)


def _watch_of(loop: asyncio.AbstractEventLoop) -> Watch:
    """The loop's watch, made on first use, remembered as the last one used."""
    global _last
    watch = _watches.get(loop)
    if watch is None:
        watch = _watches[loop] = Watch()
    _last = (weakref.ref(loop), watch)
    return watch


async def _timeout(call: Awaitable[T], seconds: float) -> T:
    async with asyncio.timeout(seconds):
        return await call


def _named(timed: Awaitable[T], overdue: Callable[[], BaseException] | None) -> Awaitable[T]:
    """``timed``, its ``TimeoutError`` replaced by ``overdue()`` when one is given."""
    return timed if overdue is None else _renamed(timed, overdue)


async def _renamed(timed: Awaitable[T], overdue: Callable[[], BaseException]) -> T:
    try:
        return await timed
    except TimeoutError:
        raise overdue() from None
