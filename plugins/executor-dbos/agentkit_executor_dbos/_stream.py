"""A streamed run's events, published to its DBOS stream so any process can follow the run.

A run submitted with ``stream=True`` runs with ``on_event`` set: each model call is streamed,
and its events (``"text"``, ``"reasoning"``, ``"tool_call"``, ``"done"``) are written to the
workflow's stream
``agentkit.events`` from inside the model call's step, as they come (each value a list of the
events that were waiting). A write from a step is not a recorded operation of the workflow, so
a replayed step (which does not run) writes nothing and the workflow's operations stay the same
in every execution. At the end the workflow writes one ``"result"`` event and closes the
stream; both are recorded operations, made once.

dbos is imported by the functions that write and read, never at import.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import TypeVar

from agentkit_core import AgentResult
from agentkit_core.plugin import StreamEvent

from ._runtime import RunNotFound

if TYPE_CHECKING:
    from dbos import DBOSClient

T = TypeVar("T")

#: The DBOS stream key a run's events are written to.
EVENTS = "agentkit.events"


class RunStream:
    """The stream of the run the workflow is running: what ``on_event`` feeds.

    The model step in flight drains it (:meth:`during`); an event outside a model step (there is
    none in core's loop) is dropped rather than written as a workflow operation.
    """

    def __init__(self) -> None:
        self._queue: asyncio.Queue[StreamEvent | None] | None = None

    def put(self, event: StreamEvent) -> None:
        """``on_event``: queue ``event`` for the step in flight to write."""
        if self._queue is not None:
            self._queue.put_nowait(event)

    async def during(self, call: Awaitable[T]) -> T:
        """Await ``call`` (a model step's body) while writing the events it makes, in order.

        The writer is a task of the step (it inherits the step's DBOS context), and the step
        ends only when every event it made is written.
        """
        queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
        self._queue = queue
        writer = asyncio.ensure_future(_write(queue))
        try:
            return await call
        finally:
            self._queue = None
            queue.put_nowait(None)
            await writer


#: The stream of the run the current workflow is running (None: the run is not streamed).
STREAM: contextvars.ContextVar[RunStream | None] = contextvars.ContextVar(
    "agentkit_dbos_stream", default=None
)


async def _write(queue: asyncio.Queue[StreamEvent | None]) -> None:
    """Write the queued events, all those waiting as one value.

    A model that streams faster than the database writes costs fewer writes, not a growing lag.
    """
    from dbos import DBOS

    done = False
    while not done:
        batch = [await queue.get()]
        while not queue.empty():
            batch.append(queue.get_nowait())
        done = batch[-1] is None
        events = [event for event in batch if event is not None]
        if events:
            await DBOS.write_stream_async(EVENTS, events)


async def finish(result: AgentResult) -> None:
    """Write the run's ``"result"`` event and close its stream (from the workflow: once)."""
    from dbos import DBOS

    await DBOS.write_stream_async(EVENTS, [StreamEvent("result", result=result)])
    await DBOS.close_stream_async(EVENTS)


async def read(
    client: Callable[[], DBOSClient],
    run_id: str,
    database: str,
    result: Callable[[], Awaitable[AgentResult]],
) -> AsyncIterator[StreamEvent]:
    """The events of run ``run_id``, then its ``"result"`` (see ``RunHandle.stream``).

    ``client`` gives the DBOS client of the run's ``database``; ``result`` waits for the run's
    result, for a run that ends without streaming one.
    """
    from dbos._error import DBOSNonExistentWorkflowError

    ended = False
    events = client().read_stream_async(run_id, EVENTS, polling_interval_sec=0.05)
    try:
        async for batch in events:
            for event in batch:
                ended = event.kind == "result"
                yield event
    except DBOSNonExistentWorkflowError as exc:
        raise RunNotFound.of(run_id, database) from exc
    if not ended:  # not streamed, failed or cancelled: its result, or its error
        yield StreamEvent("result", result=await result())
