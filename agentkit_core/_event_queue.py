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
from typing import TYPE_CHECKING
from typing import Generic
from typing import TypeVar

from . import _events
from ._errors import ConfigError
from ._event_log import EventLog
from ._event_log import Note
from ._events import RunEvent
from ._events import model_sink

if TYPE_CHECKING:
    from ._models import StreamEvent
    from ._output import OutputStream
    from ._scope import RunScope

T = TypeVar("T")
R = TypeVar("R")


class EventQueue(Generic[T]):
    """Where a run's items wait for their consumer, in order; iterate it to take them.

    ``put`` is what the run pays per item: an append, and a wake-up when the consumer waits.
    What may join the item before it (a model's delta) is the caller's to join, in
    :attr:`waiting`, before the consumer takes it.
    """

    def __init__(self) -> None:
        #: The items not yet taken, oldest first.
        self.waiting: deque[T] = deque()
        #: What the consumer awaits while nothing waits (None while it is busy).
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def put(self, item: T) -> None:
        self.waiting.append(item)
        if self._waiter is not None:
            self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        """No more items: the iteration ends once the waiting ones are taken."""
        self._closed = True
        self._wake()

    async def more(self) -> bool:
        """Wait until an item waits in :attr:`waiting`; False once closed with none left."""
        while not self.waiting:
            if self._closed:
                return False
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return True

    async def __aiter__(self) -> AsyncIterator[T]:
        waiting = self.waiting
        while await self.more():
            while waiting:
                yield waiting.popleft()


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
    queue: EventQueue[Note] = EventQueue()
    waiting = queue.waiting
    log = scope.trace.events = EventLog(scope.run_id, queue.put, waiting, _events)
    runner = asyncio.ensure_future(start(model_sink(log, partials)))
    runner.add_done_callback(lambda _: queue.close())
    build = log.build
    try:  # the queue's loop inlined: a generator less for each event to pass through
        while await queue.more():
            while waiting:
                yield build(waiting.popleft())
        await runner
    finally:
        scope.trace.events = None
        await stopped(runner)
