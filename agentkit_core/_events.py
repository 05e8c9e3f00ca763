"""The run as a stream of typed events: one frozen class per step a caller or a UI can see.

The run's :class:`~agentkit_core.plugin.Trace` is the one place events come from: a span that
opens or closes (the run, a turn, a model call, a tool call, a fold) becomes its event here, in
:meth:`EventLog.span_opened`/:meth:`EventLog.span_closed`; the few steps that are not spans
(a model's deltas, a verdict, a retry, a held batch) are told to the same log where the loop
records them. Nothing is built unless someone listens: a trace without a log pays one
``is None`` test per span.

Every event carries the run's id, a sequence number that strictly increases over the run (a
child agent's events share its parent's numbering) and, where the event corresponds to an item
of the run's session written at that moment, that item's id.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import MutableSequence
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar

from ._encoder import jsonable
from ._messages import JSONObject
from ._messages import Message
from ._messages import ToolCall
from ._messages import Usage
from ._records import quick_init
from ._tokens import estimate_tokens

if TYPE_CHECKING:
    from ._models import StreamEvent
    from ._output import OutputStream
    from ._run_state import AgentResult
    from ._tracing import Span
    from ._verdicts import Verdict


@quick_init
@dataclass(frozen=True, slots=True)
class RunEvent:
    """What every event carries. ``kind`` names the event in JSON (``"tool_finished"``)."""

    kind: ClassVar[str] = "event"
    run_id: str
    seq: int
    item_id: str | None

    def to_json(self) -> JSONObject:
        """The event as JSON-ready data: ``kind`` first, then its fields."""
        data: JSONObject = {"kind": self.kind}
        for name in self.__dataclass_fields__:
            data[name] = jsonable(getattr(self, name))
        return data


@quick_init
@dataclass(frozen=True, slots=True)
class RunStarted(RunEvent):
    kind: ClassVar[str] = "run_started"
    agent: str
    model: str
    session_id: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class TurnStarted(RunEvent):
    kind: ClassVar[str] = "turn_started"
    turn: int


@quick_init
@dataclass(frozen=True, slots=True)
class ModelRequestStarted(RunEvent):
    kind: ClassVar[str] = "model_request_started"
    messages: int
    estimated_tokens: int


@quick_init
@dataclass(frozen=True, slots=True)
class TextDelta(RunEvent):
    kind: ClassVar[str] = "text_delta"
    text: str


@quick_init
@dataclass(frozen=True, slots=True)
class ThinkingDelta(RunEvent):
    kind: ClassVar[str] = "thinking_delta"
    text: str


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCallStarted(RunEvent):
    kind: ClassVar[str] = "tool_call_started"
    call_id: str
    name: str


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCallArgsDelta(RunEvent):
    kind: ClassVar[str] = "tool_call_args_delta"
    call_id: str
    delta: str


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCallReady(RunEvent):
    kind: ClassVar[str] = "tool_call_ready"
    call: ToolCall


@quick_init
@dataclass(frozen=True, slots=True)
class VerdictReported(RunEvent):
    """A policy's, a guard's or a contested hook's decision (its ``namespace`` says which)."""

    kind: ClassVar[str] = "verdict"
    verdict: Verdict


@quick_init
@dataclass(frozen=True, slots=True)
class ApprovalRequested(RunEvent):
    kind: ClassVar[str] = "approval_requested"
    call: ToolCall
    reason: str


@quick_init
@dataclass(frozen=True, slots=True)
class ApprovalAnswered(RunEvent):
    kind: ClassVar[str] = "approval_answered"
    call_id: str
    approved: bool
    by: str


@quick_init
@dataclass(frozen=True, slots=True)
class ToolStarted(RunEvent):
    kind: ClassVar[str] = "tool_started"
    call_id: str
    name: str
    arguments: JSONObject


@quick_init
@dataclass(frozen=True, slots=True)
class ToolProgress(RunEvent):
    kind: ClassVar[str] = "tool_progress"
    call_id: str
    progress: float
    total: float | None = None
    message: str = ""


@quick_init
@dataclass(frozen=True, slots=True)
class ToolFinished(RunEvent):
    """A tool call's end: its result's text (or parts), whether it is an error, seconds taken."""

    kind: ClassVar[str] = "tool_finished"
    call_id: str
    name: str
    result: object
    is_error: bool
    duration: float
    error: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Retry(RunEvent):
    kind: ClassVar[str] = "retry"
    attempt: int
    error: str
    wait: float


@quick_init
@dataclass(frozen=True, slots=True)
class CompactionFold(RunEvent):
    kind: ClassVar[str] = "compaction_fold"
    compactor: str
    messages: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    error: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class MemoryWrite(RunEvent):
    kind: ClassVar[str] = "memory_write"
    tool: str
    call_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class UsageUpdate(RunEvent):
    """One model request's usage and the run's total so far (``cost`` when it is known)."""

    kind: ClassVar[str] = "usage"
    model: str
    request: Usage
    total: Usage
    cost: float | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class OutputPartial(RunEvent):
    kind: ClassVar[str] = "output_partial"
    value: object


@quick_init
@dataclass(frozen=True, slots=True)
class ChildRunStarted(RunEvent):
    """A child agent's run began (its own events follow, with its ``run_id``)."""

    kind: ClassVar[str] = "child_run_started"
    child_run_id: str
    agent: str


@quick_init
@dataclass(frozen=True, slots=True)
class ChildRunFinished(RunEvent):
    kind: ClassVar[str] = "child_run_finished"
    child_run_id: str
    agent: str
    status: str


@quick_init
@dataclass(frozen=True, slots=True)
class Handoff(RunEvent):
    """The run went on under another agent (``Kit(handoffs=)``); ``call_id`` took it."""

    kind: ClassVar[str] = "handoff"
    from_agent: str
    to_agent: str
    call_id: str


@quick_init
@dataclass(frozen=True, slots=True)
class RunSuspended(RunEvent):
    kind: ClassVar[str] = "run_suspended"
    pending: tuple[ToolCall, ...]
    reason: str
    #: The suspended :class:`~agentkit_core.AgentResult` (``resume`` continues it).
    result: AgentResult


@quick_init
@dataclass(frozen=True, slots=True)
class RunFinished(RunEvent):
    """The run's end; ``result`` is the :class:`~agentkit_core.AgentResult` ``run`` returns."""

    kind: ClassVar[str] = "run_finished"
    result: AgentResult


@quick_init
@dataclass(frozen=True, slots=True)
class RunFailed(RunEvent):
    kind: ClassVar[str] = "run_failed"
    error: str
    error_type: str


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
    seq: int = 0
    #: Usage over the run's requests, as far as the events built so far tell.
    total: Usage = field(default_factory=Usage)
    #: The last request estimated, and its estimate (see :meth:`estimate`).
    _sent: Sequence[Message] = ()
    _sent_tokens: int = 0

    def build(self, note: Note) -> RunEvent:
        """The event ``note`` stands for (notes are built in the order they were put)."""
        return note[0](self, note)  # type: ignore[no-any-return]

    def estimate(self, messages: Sequence[Message]) -> int:
        """``estimate_tokens(messages)``, in time proportional to what is new since the last.

        A request that extends the previous one (the same first message, and the previous
        one's last message in its place) is counted as the previous estimate plus its new
        messages: a turn costs the same at turn 1,000 as at turn 1.
        """
        sent, n = self._sent, len(self._sent)
        if n and len(messages) >= n and messages[0] is sent[0] and messages[n - 1] is sent[-1]:
            tokens = self._sent_tokens + estimate_tokens(messages[n:])
        else:
            tokens = estimate_tokens(messages)
        self._sent, self._sent_tokens = messages, tokens
        return tokens

    def emit(
        self,
        cls: type[RunEvent],
        run_id: str | None = None,
        item_id: str | None = None,
        **fields: object,
    ) -> None:
        """Note a ``cls`` event, with the next sequence number, made of ``fields``."""
        self.seq += 1
        self.put((_record, self.seq, cls, run_id, item_id, fields))

    def span_opened(self, span: Span) -> None:
        make = _OPENED.get(span.name)
        if make is not None:  # the request's messages go now: the span drops them at its end
            self.seq += 1
            self.put((make, self.seq, span, span.payload.get("request")))

    def span_closed(self, span: Span) -> None:
        make = _CLOSED.get(span.name)
        if make is None:
            return
        if make is _usage_update:
            if span.error is not None:
                return
        elif make is _child_finished and span.run_id == self.run_id:
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
                self.emit(ApprovalRequested, call=call, reason=result.stop_reason or "")
            self.emit(
                RunSuspended,
                item_id=item_id,
                pending=tuple(result.pending),
                reason=result.stop_reason or "",
                result=result,
            )
        else:
            self.emit(RunFinished, item_id=item_id, result=result)

    def failed(self, exc: BaseException) -> None:
        self.emit(RunFailed, error=str(exc), error_type=type(exc).__name__)

    def verdict(self, verdict: Verdict, item_id: str | None) -> None:
        """A reported verdict: a person's (or a policy's release) answer, or a decision."""
        run = verdict.run or None
        if verdict.namespace == "approval":
            approved = verdict.verdict == "allow"
            self.emit(
                ApprovalAnswered,
                run,
                item_id=item_id,
                call_id=verdict.subject_id,
                approved=approved,
                by=verdict.by,
            )
        else:
            self.emit(VerdictReported, run, item_id=item_id, verdict=verdict)


# The builders a note names. Each takes the log and the note (builder, seq, what it reads...).


def _record(log: EventLog, note: Note) -> RunEvent:
    _, seq, cls, run_id, item_id, fields = note
    return cls(run_id or log.run_id, seq, item_id, **fields)  # type: ignore[no-any-return]


def _turn_started(log: EventLog, note: Note) -> RunEvent:
    span = note[2]
    return TurnStarted(span.run_id or log.run_id, note[1], None, span.attributes.get("turn", 0))


def _request_started(log: EventLog, note: Note) -> RunEvent:
    _, seq, span, messages = note
    tokens = 0 if messages is None else log.estimate(messages)
    at = span.attributes
    return ModelRequestStarted(span.run_id or log.run_id, seq, None, at.get("messages", 0), tokens)


def _tool_started(log: EventLog, note: Note) -> RunEvent:
    span = note[2]
    at = span.attributes
    return ToolStarted(
        span.run_id or log.run_id,
        note[1],
        None,
        at.get("call_id", ""),
        at.get("tool", ""),
        span.payload.get("arguments", {}),
    )


def _run_started(log: EventLog, note: Note) -> RunEvent:
    span = note[2]
    at, run = span.attributes, span.run_id or ""
    agent = str(at.get("agent", ""))
    if run != log.run_id:
        return ChildRunStarted(log.run_id, note[1], None, run, agent)
    return RunStarted(
        log.run_id,
        note[1],
        at.get("task_item"),
        agent,
        str(at.get("model", "")),
        at.get("session_id"),
    )


def _tool_finished(log: EventLog, note: Note) -> RunEvent:
    span = note[2]
    at = span.attributes
    return ToolFinished(
        span.run_id or log.run_id,
        note[1],
        None,
        at.get("call_id", ""),
        at.get("tool", ""),
        span.payload.get("result"),
        bool(at.get("is_error", span.error is not None)),
        span.duration or 0.0,
        span.error,
    )


def _usage_update(log: EventLog, note: Note) -> RunEvent:
    span = note[2]
    at = span.attributes
    request = Usage(
        at.get("input_tokens", 0),
        at.get("output_tokens", 0),
        1,
        at.get("cache_read_tokens", 0),
        at.get("cache_write_tokens", 0),
        at.get("reasoning_tokens", 0),
    )
    log.total = total = log.total + request
    run_id = span.run_id or log.run_id
    return UsageUpdate(
        run_id, note[1], None, str(at.get("model") or ""), request, total, at.get("cost")
    )


def _fold(log: EventLog, note: Note) -> RunEvent:
    span = note[2]
    at = span.attributes
    return CompactionFold(
        span.run_id or log.run_id,
        note[1],
        None,
        str(at.get("compactor", "folding")),
        at.get("fold_messages"),
        at.get("fold_tokens_before"),
        at.get("fold_tokens_after"),
        at.get("fold_error") or span.error,
    )


def _child_finished(log: EventLog, note: Note) -> RunEvent:
    span = note[2]
    at = span.attributes
    status = str(at.get("status", "failed" if span.error else "done"))
    child, agent = span.run_id or "", str(at.get("agent", ""))
    return ChildRunFinished(log.run_id, note[1], None, child, agent, status)


def _text(log: EventLog, note: Note) -> RunEvent:
    return TextDelta(log.run_id, note[1], None, note[3])


def _thinking(log: EventLog, note: Note) -> RunEvent:
    return ThinkingDelta(log.run_id, note[1], None, note[3])


def _arguments(log: EventLog, note: Note) -> RunEvent:
    return ToolCallArgsDelta(log.run_id, note[1], None, note[2], note[3])


#: The event a span's opening or closing makes, by the span's name.
_OPENED = {
    "turn": _turn_started,
    "model_call": _request_started,
    "tool_call": _tool_started,
    "run": _run_started,
}
_CLOSED = {
    "tool_call": _tool_finished,
    "model_call": _usage_update,
    "fold": _fold,
    "compaction": _fold,
    "run": _child_finished,
}


def model_sink(
    log: EventLog, partials: Callable[[], OutputStream[object]] | None
) -> Callable[[StreamEvent], None]:
    """The stream sink that turns a model's stream events into the run's events.

    ``partials`` makes a fresh partial parser for typed output (``adapter.stream``); each of
    the model's answers (ended by its ``"done"``) starts a new one.
    """
    parser = None if partials is None else partials()
    started: set[str] = set()  # the calls of this answer whose start was told

    def start(call: ToolCall) -> None:
        if call.id not in started:
            started.add(call.id)
            log.emit(ToolCallStarted, call_id=call.id, name=call.name)

    def sink(event: StreamEvent) -> None:
        nonlocal parser
        kind = event.kind
        if kind == "text" and event.text:
            log.delta(_text, "", event.text)
            if parser is not None and (value := parser.feed(event.text)) is not None:
                log.emit(OutputPartial, value=value)
        elif kind == "reasoning" and event.text:
            log.delta(_thinking, "", event.text)
        elif kind == "tool_call_delta" and event.tool_call is not None:
            call = event.tool_call
            start(call)
            if call.arguments:
                log.delta(_arguments, call.id, call.arguments)
        elif kind == "tool_call" and event.tool_call is not None:
            start(event.tool_call)
            log.emit(ToolCallReady, call=event.tool_call)
        elif kind == "done":
            started.clear()
            if partials is not None:
                parser = partials()

    return sink
