"""The queue a run's events wait in for their consumer, and the run's stream around it.

The stream reads the queue while the run runs as a task of its own. Kept apart from
``_events`` (a primitive every plugin's entry module may reach through the trace) because it
needs asyncio, which ``agentkit plugins list`` must not import.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Generic
from typing import TypeVar

from ._errors import ConfigError
from ._events import EventLog
from ._events import RunEvent
from ._events import TextDelta
from ._events import ThinkingDelta
from ._events import ToolCallArgsDelta
from ._events import model_sink

if TYPE_CHECKING:
    from ._models import StreamEvent
    from ._output import OutputStream
    from ._scope import RunScope

T = TypeVar("T")
R = TypeVar("R")


#: The events :func:`merge_delta` may join.
_DELTAS = frozenset({TextDelta, ThinkingDelta, ToolCallArgsDelta})


class EventQueue(Generic[T]):
    """Where a run's events wait for their consumer, in order; iterate it to take them.

    A consumer that falls behind gets the deltas waiting for it merged (:func:`merge_delta`),
    so their backlog stays one event per stretch of text or arguments; step events
    wait one by one, none merged or dropped (there are a handful per turn, each already kept in
    the run's trace).
    """

    def __init__(self) -> None:
        #: The events not yet taken, oldest first.
        self.waiting: deque[T] = deque()
        self._ready = asyncio.Event()
        self._closed = False

    def put(self, event: T) -> None:
        waiting = self.waiting
        if type(event) in _DELTAS and waiting:
            merged = merge_delta(waiting[-1], event)
            if merged is not None:
                waiting[-1] = merged
                return
        waiting.append(event)
        if not self._ready.is_set():
            self._ready.set()

    def close(self) -> None:
        """No more events: the iteration ends once the waiting ones are taken."""
        self._closed = True
        self._ready.set()

    async def more(self) -> bool:
        """Wait until an event waits in :attr:`waiting`; False once closed with none left."""
        while not self.waiting:
            if self._closed:
                return False
            self._ready.clear()
            await self._ready.wait()
        return True

    async def __aiter__(self) -> AsyncIterator[T]:
        waiting = self.waiting
        while await self.more():
            while waiting:
                yield waiting.popleft()


def merge_delta(waiting: T, event: T) -> T | None:
    """``waiting`` with ``event`` joined on, when both are deltas of one stream; else None.

    What a consumer that is behind receives instead of the two: one delta holding both texts
    (or both argument fragments of one call), under the later sequence number.
    """
    if type(waiting) is not type(event):
        return None
    if isinstance(event, TextDelta | ThinkingDelta):
        assert isinstance(waiting, TextDelta | ThinkingDelta)
        return replace(event, text=waiting.text + event.text)  # type: ignore[return-value]
    if isinstance(event, ToolCallArgsDelta):
        assert isinstance(waiting, ToolCallArgsDelta)
        if waiting.call_id == event.call_id:
            return replace(event, delta=waiting.delta + event.delta)  # type: ignore[return-value]
    return None


async def while_running(
    runner: asyncio.Future[R], queue: EventQueue[T], items: AsyncIterable[T] | None = None
) -> AsyncGenerator[T, None]:
    """``items`` (the queue's own, by default) while ``runner`` runs; then its error, if any.

    Closing it early (iterate it under ``contextlib.aclosing``: a generator left inside another
    is closed only when collected) cancels the run and waits for it to unwind.
    """
    runner.add_done_callback(lambda _: queue.close())
    try:
        async for item in queue if items is None else items:
            yield item
        await runner
    finally:
        await stopped(runner)


async def stopped(runner: asyncio.Future[R]) -> None:
    """Cancel ``runner`` if it still runs, and wait for it to unwind."""
    if not runner.done():
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


async def stream_events(
    scope: RunScope,
    start: Callable[[Callable[[StreamEvent], None]], Awaitable[R]],
    partials: Callable[[], OutputStream[object]] | None,
) -> AsyncGenerator[RunEvent, None]:
    """The events of the run ``start(sink)`` drives on ``scope``, as they happen.

    ``sink`` takes the model's stream events (``partials`` parses typed output from them).
    Leaving early cancels the run; one scope streams one run at a time.
    """
    if scope.trace.events is not None:
        raise ConfigError(
            f"run {scope.run_id!r} is streaming its events already; give each run its own "
            "context (leave ctx= unset)",
            source="Agent.run_stream_events",
        )
    queue: EventQueue[RunEvent] = EventQueue()
    log = scope.trace.events = EventLog(scope.run_id, queue.put)
    runner = asyncio.ensure_future(start(model_sink(log, partials)))
    runner.add_done_callback(lambda _: queue.close())
    waiting = queue.waiting
    try:  # the queue's loop inlined: a generator less for each event to pass through
        while await queue.more():
            while waiting:
                yield waiting.popleft()
        await runner
    finally:
        scope.trace.events = None
        await stopped(runner)
