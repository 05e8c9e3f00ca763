"""The queue a run's events wait in for their consumer, and the run's stream around it.

The stream reads the queue while the run runs as a task of its own. Kept apart from
``_events`` (a primitive every plugin's entry module may reach through the trace) because it
needs asyncio, which ``agentkit plugins list`` must not import.
"""

from __future__ import annotations

import asyncio
import functools
import types
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Generator
from typing import TYPE_CHECKING
from typing import TypeVar

from . import _events
from ._errors import ConfigError
from ._event_log import Backlog
from ._event_log import EventLog
from ._events import RunEvent
from ._events import model_sink

if TYPE_CHECKING:
    from ._context import RunContext
    from ._models import StreamEvent
    from ._output import OutputStream

T = TypeVar("T")
R = TypeVar("R")


class EventQueue(Backlog[T]):
    """Where a run's items wait for their consumer, in order; iterate it to take them.

    What may join the item before it (a model's delta) is the caller's to join, in
    :attr:`waiting`, before the consumer takes it.
    """

    __slots__ = ()

    def run(self, work: Callable[[], Awaitable[R]]) -> asyncio.Task[R]:
        """``work()`` in a task of its own, the queue closed in that task as it ends."""
        return asyncio.ensure_future(closing(self, work))

    async def __aiter__(self) -> AsyncIterator[T]:
        waiting = self.waiting
        while await more(self):
            while waiting:
                yield waiting.popleft()


async def more(backlog: Backlog[T]) -> bool:
    """Wait until an item waits in ``backlog``; False once it is closed with none left.

    With none waiting, the consumer first lets the loop run once (the run's task, if it is
    ready, goes on to its next wait, noting what it does): only if nothing came does it wait
    to be woken. A run whose model answers over the network so hands over each turn's notes
    in that pass, without a future made, awaited and set for the turn.
    """
    if not backlog.waiting and not backlog.closed:
        await _pass()
    while not backlog.waiting:
        if backlog.closed:
            return False
        backlog.waiter = asyncio.get_running_loop().create_future()
        await backlog.waiter
    return True


@types.coroutine
def _pass() -> Generator[None, None, None]:
    """Let the event loop run its other ready callbacks once (``asyncio.sleep(0)``'s own pass)."""
    yield


async def stopped(runner: asyncio.Future[R]) -> None:
    """Cancel ``runner`` if it still runs, and wait for it to unwind."""
    if not runner.done():
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


async def closing(backlog: Backlog[T], work: Callable[[], Awaitable[R]]) -> R:
    """``work()``'s result, ``backlog`` closed as it ends, in its own task.

    Not a done callback of the task, which the loop would run one pass later: the consumer
    that took the last items would wait that pass to learn there are no more. ``work`` is
    called here, so a task cancelled before it starts leaves no coroutine unawaited.
    """
    try:
        return await work()
    finally:
        backlog.close()


async def stream_events(
    context: Callable[[], RunContext],
    start: Callable[[RunContext, Callable[[StreamEvent], None]], Awaitable[R]],
    partials: Callable[[], OutputStream[object]] | None,
) -> AsyncGenerator[RunEvent, None]:
    """The events of the run ``start(ctx, sink)`` drives on ``context()``, as they happen.

    ``sink`` takes the model's stream events (``partials`` parses typed output from them).
    Leaving early cancels the run; one context streams one run at a time.
    """
    scope = context()
    if scope.trace.events is not None:
        raise ConfigError(
            f"run {scope.run_id!r} is streaming its events already; give each run its own "
            "context (leave ctx= unset)",
            source="Agent.run_stream_events",
        )
    log = scope.trace.events = EventLog(scope.run_id, _events, partials)
    runner = asyncio.ensure_future(closing(log, functools.partial(start, scope, model_sink(log))))
    waiting = log.waiting
    try:  # the queue's loop inlined: a generator less for each event to pass through
        while await more(log):
            while waiting:  # build each note, numbered next (a note may stand for none)
                note = waiting.popleft()
                if (event := note[0](log, note, log.seq + 1)) is not None:
                    log.seq = event.seq
                    yield event
        await runner
    finally:
        scope.trace.events = None
        await stopped(runner)
