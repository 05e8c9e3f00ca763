"""The log a run's trace feeds while someone streams its events: notes each, in order.

Apart from the event classes (``_events``), which the log is handed: a trace refers to its
log, and a run that nobody streams never builds an event, so it need not import the thirty
event classes (~10 ms of a first run). Apart from asyncio too (``agentkit plugins list`` must
not import it): the consumer waits for a :class:`Backlog` in ``_event_queue``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING
from typing import Any
from typing import Generic
from typing import TypeVar

from ._messages import Usage
from ._tokens import SentTokens

if TYPE_CHECKING:
    import asyncio

    from ._events import RunEvent
    from ._output import OutputStream
    from ._run_state import AgentResult
    from ._tracing import Span
    from ._verdicts import Verdict

T = TypeVar("T")

#: What the run notes for an event: the function that builds it (in the consumer's time, see
#: :class:`EventLog`), then what that function reads.
Note = tuple[Any, ...]
#: A note's builder: the log, the note and the number the event gets -> the event, or None.
Builder = Callable[["EventLog", Note, int], "RunEvent | None"]


class Backlog(Generic[T]):
    """Items waiting for their consumer, in order (``_event_queue.more`` waits for one).

    ``put`` is what the producer pays per item: an append, and a wake-up when the consumer
    waits.
    """

    __slots__ = ("closed", "waiter", "waiting")

    def __init__(self) -> None:
        #: The items not yet taken, oldest first.
        self.waiting: deque[T] = deque()
        #: What the consumer awaits while nothing waits (None while it is busy).
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False

    def put(self, item: T) -> None:
        self.waiting.append(item)
        if self.waiter is not None:
            self.wake()

    def wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        """No more items: the iteration ends once the waiting ones are taken."""
        self.closed = True
        self.wake()


class EventLog(Backlog[Note]):
    """Notes a run's events, in the run's own task, for the consumer to number and build.

    The run appends a note (a tuple: the function that builds the event, and the span or
    values it is built from); the consumer takes the notes out of ``waiting`` in order and
    calls each one's builder with the log, the note and the next number: it makes the frozen
    event, or returns None for a note that stands for none (one that stands for two builds
    the first and puts a note for the second in front of ``waiting``). So a turn pays a tuple
    per step, and the numbers and records are made while the run waits for its model, where
    a consumer gets its time. A span's event reads the span then: what it reads (the
    attributes set at its open, or everything once it is closed) no longer changes.

    ``run_id`` is the top run's: a child agent's run shares its parent's log (its events are
    stamped with its own run id, numbered in the one sequence).
    """

    __slots__ = (
        "estimate",
        "kinds",
        "on_close",
        "on_open",
        "parser",
        "partials",
        "run_id",
        "seq",
        "total",
    )

    def __init__(
        self,
        run_id: str,
        kinds: ModuleType,
        partials: Callable[[], OutputStream[object]] | None = None,
    ) -> None:
        super().__init__()
        self.run_id = run_id
        #: The event classes and the builders of span events (``agentkit_core._events``),
        #: handed in by whoever streams the run: the trace holds its log, and a run nobody
        #: streams never imports them.
        self.kinds = kinds
        #: The builders of span events by span name.
        self.on_open: dict[str, Builder] = kinds.OPENED
        self.on_close: dict[str, Builder] = kinds.CLOSED
        #: Makes a fresh parser of the typed output a streamed answer holds, or None.
        self.partials = partials
        #: The typed output parsed from the answer being built, if any.
        self.parser = None if partials is None else partials()
        #: The number of the last event built.
        self.seq = 0
        #: Usage over the run's requests, as far as the events built so far tell.
        self.total = Usage()
        #: Estimates each request from the messages new since the last (a turn's estimate
        #: costs the same at turn 1,000 as at turn 1).
        self.estimate = SentTokens()

    def emit(
        self,
        cls: type[RunEvent],
        run_id: str | None = None,
        item_id: str | None = None,
        **fields: object,
    ) -> None:
        """Note a ``cls`` event, made of ``fields``."""
        self.put((record, cls, run_id, item_id, fields))

    def span_opened(self, span: Span) -> None:
        make = self.on_open.get(span.name)
        if make is not None:  # the request's messages go now: the span drops them at its end
            self.waiting.append((make, span, span.payload.get("request")))  # put, inlined:
            if self.waiter is not None:  # a turn opens three spans
                self.wake()

    def span_closed(self, span: Span) -> None:
        make = self.on_close.get(span.name)
        if make is not None:
            self.waiting.append((make, span))
            if self.waiter is not None:
                self.wake()

    def delta(self, make: Builder, key: str, text: str, name: str) -> None:
        """Note a model's delta: joined onto the one before it when that one still waits.

        The consumer is behind, then: it gets one delta holding both texts (or both argument
        fragments of one call: ``key`` is the call's id, ``name`` its tool's, "" for a text).
        """
        waiting = self.waiting
        if waiting:
            last = waiting[-1]
            if last[0] is make and last[1] == key:
                waiting[-1] = (make, key, last[2] + text, name)
                return
        self.put((make, key, text, name))

    def finished(self, result: AgentResult, item_id: str | None) -> None:
        """The run's last event: suspended (each held call's request first), or finished."""
        if result.status == "suspended":
            for call in result.pending:
                self.emit(self.kinds.ApprovalRequested, call=call, reason=result.stop_reason or "")
            self.emit(
                self.kinds.RunSuspended,
                item_id=item_id,
                pending=tuple(result.pending),
                reason=result.stop_reason or "",
                result=result,
            )
        else:
            self.emit(self.kinds.RunFinished, item_id=item_id, result=result)

    def failed(self, exc: BaseException) -> None:
        self.emit(self.kinds.RunFailed, error=str(exc), error_type=type(exc).__name__)

    def verdict(self, verdict: Verdict, item_id: str | None) -> None:
        """A reported verdict: a person's (or a policy's release) answer, or a decision."""
        run = verdict.run or None
        if verdict.namespace == "approval":
            approved = verdict.verdict == "allow"
            self.emit(
                self.kinds.ApprovalAnswered,
                run,
                item_id=item_id,
                call_id=verdict.subject_id,
                approved=approved,
                by=verdict.by,
            )
        else:
            self.emit(self.kinds.VerdictReported, run, item_id=item_id, verdict=verdict)


def record(log: EventLog, note: Note, seq: int) -> RunEvent:
    _, cls, run_id, item_id, fields = note
    return cls(run_id or log.run_id, seq, item_id, **fields)  # type: ignore[no-any-return]
