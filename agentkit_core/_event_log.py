"""The log a run's trace feeds while someone streams its events: numbers them, notes each.

Apart from the event classes (``_events``), which the log is handed: a trace refers to its
log, and a run that nobody streams never builds an event, so it need not import the thirty
event classes (~10 ms of a first run).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import MutableSequence
from dataclasses import dataclass
from dataclasses import field
from types import ModuleType
from typing import TYPE_CHECKING
from typing import Any

from ._messages import Usage
from ._tokens import SentTokens

if TYPE_CHECKING:
    from ._events import RunEvent
    from ._run_state import AgentResult
    from ._tracing import Span
    from ._verdicts import Verdict


#: What the run notes for an event: the function that builds it (in the consumer's time, see
#: :class:`EventLog`), the event's sequence number, then what that function reads.
Note = tuple[Any, ...]


@dataclass(slots=True)
class EventLog:
    """Numbers a run's events and notes each, in the run's own task, for the consumer to build.

    The run appends a note (a tuple: the function that builds the event, its sequence number,
    and the span or values it is built from) with ``put``; :meth:`build`, called by whoever
    takes the notes out of ``waiting``, makes the frozen event. So a turn pays a tuple per
    event, and the records are made while the run waits for its model, where a consumer gets
    its time. A span's event reads the span then: what it reads (the attributes set at its
    open, or everything once it is closed) no longer changes.

    ``run_id`` is the top run's: a child agent's run shares its parent's log (its events are
    stamped with its own run id, numbered in the one sequence).
    """

    run_id: str
    #: Hands a note to the queue (and wakes the consumer).
    put: Callable[[Note], None]
    #: The notes not yet taken, oldest last: a delta joins the one before it, if still there.
    waiting: MutableSequence[Note]
    #: The event classes and the builders of span events (``agentkit_core._events``), handed
    #: in by whoever streams the run: the trace holds its log, and a run nobody streams never
    #: imports them.
    kinds: ModuleType
    seq: int = 0
    #: Usage over the run's requests, as far as the events built so far tell.
    total: Usage = field(default_factory=Usage)
    #: Estimates each request from the messages new since the last (a turn's estimate costs
    #: the same at turn 1,000 as at turn 1).
    estimate: SentTokens = field(default_factory=SentTokens)

    def build(self, note: Note) -> RunEvent:
        """The event ``note`` stands for (notes are built in the order they were put)."""
        return note[0](self, note)  # type: ignore[no-any-return]

    def emit(
        self,
        cls: type[RunEvent],
        run_id: str | None = None,
        item_id: str | None = None,
        **fields: object,
    ) -> None:
        """Note a ``cls`` event, with the next sequence number, made of ``fields``."""
        self.seq += 1
        self.put((record, self.seq, cls, run_id, item_id, fields))

    def span_opened(self, span: Span) -> None:
        make = self.kinds.OPENED.get(span.name)
        if make is not None:  # the request's messages go now: the span drops them at its end
            self.seq += 1
            self.put((make, self.seq, span, span.payload.get("request")))

    def span_closed(self, span: Span) -> None:
        make = self.kinds.CLOSED.get(span.name)
        if make is None:
            return
        if make is self.kinds.usage_update:
            if span.error is not None:
                return
        elif make is self.kinds.child_finished and span.run_id == self.run_id:
            return
        self.seq += 1
        self.put((make, self.seq, span))

    def delta(self, make: Callable[[EventLog, Note], RunEvent], key: str, text: str) -> None:
        """Note a model's delta: joined onto the one before it when that one still waits.

        The consumer is behind, then: it gets one delta holding both texts (or both argument
        fragments of one call: ``key`` is the call's id, "" for a text), under the later
        sequence number.
        """
        self.seq += 1
        waiting = self.waiting
        if waiting:
            last = waiting[-1]
            if last[0] is make and last[2] == key:
                waiting[-1] = (make, self.seq, key, last[3] + text)
                return
        self.put((make, self.seq, key, text))

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


def record(log: EventLog, note: Note) -> RunEvent:
    _, seq, cls, run_id, item_id, fields = note
    return cls(run_id or log.run_id, seq, item_id, **fields)  # type: ignore[no-any-return]
