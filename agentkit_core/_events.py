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
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import ClassVar

from ._encoder import jsonable
from ._event_log import EventLog
from ._event_log import Note
from ._messages import JSONObject
from ._messages import ToolCall
from ._messages import Usage
from ._records import quick_init

if TYPE_CHECKING:
    from ._models import StreamEvent
    from ._run_state import AgentResult
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


# The builders a note names. Each takes the log, the note (builder, what it reads...) and the
# number the event gets; one that returns None stands for no event (and uses no number).


def _turn_started(log: EventLog, note: Note, seq: int) -> RunEvent:
    span = note[1]
    return TurnStarted(span.run_id or log.run_id, seq, None, span.attributes.get("turn", 0))


def _request_started(log: EventLog, note: Note, seq: int) -> RunEvent:
    _, span, messages = note
    tokens = 0 if messages is None else log.estimate(messages)
    at = span.attributes
    return ModelRequestStarted(span.run_id or log.run_id, seq, None, at.get("messages", 0), tokens)


def _tool_started(log: EventLog, note: Note, seq: int) -> RunEvent:
    span = note[1]
    at = span.attributes
    return ToolStarted(
        span.run_id or log.run_id,
        seq,
        None,
        at.get("call_id", ""),
        at.get("tool", ""),
        span.payload.get("arguments", {}),
    )


def _run_started(log: EventLog, note: Note, seq: int) -> RunEvent:
    span = note[1]
    at, run = span.attributes, span.run_id or ""
    agent = str(at.get("agent", ""))
    if run != log.run_id:
        return ChildRunStarted(log.run_id, seq, None, run, agent)
    return RunStarted(
        log.run_id,
        seq,
        at.get("task_item"),
        agent,
        str(at.get("model", "")),
        at.get("session_id"),
    )


def _tool_finished(log: EventLog, note: Note, seq: int) -> RunEvent:
    span = note[1]
    at = span.attributes
    return ToolFinished(
        span.run_id or log.run_id,
        seq,
        None,
        at.get("call_id", ""),
        at.get("tool", ""),
        span.payload.get("result"),
        bool(at.get("is_error", span.error is not None)),
        span.duration or 0.0,
        span.error,
    )


def _usage_update(log: EventLog, note: Note, seq: int) -> RunEvent | None:
    span = note[1]
    if span.error is not None:  # a failed request: its retry (or the failure) is told
        return None
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
        run_id, seq, None, str(at.get("model") or ""), request, total, at.get("cost")
    )


def _fold(log: EventLog, note: Note, seq: int) -> RunEvent:
    span = note[1]
    at = span.attributes
    return CompactionFold(
        span.run_id or log.run_id,
        seq,
        None,
        str(at.get("compactor", "folding")),
        at.get("fold_messages"),
        at.get("fold_tokens_before"),
        at.get("fold_tokens_after"),
        at.get("fold_error") or span.error,
    )


def _child_finished(log: EventLog, note: Note, seq: int) -> RunEvent | None:
    span = note[1]
    if span.run_id == log.run_id:  # the run's own end is told by finished() or failed()
        return None
    at = span.attributes
    status = str(at.get("status", "failed" if span.error else "done"))
    child, agent = span.run_id or "", str(at.get("agent", ""))
    return ChildRunFinished(log.run_id, seq, None, child, agent, status)


def _text(log: EventLog, note: Note, seq: int) -> RunEvent:
    text = note[2]
    if log.parser is not None and (value := log.parser.feed(text)) is not None:
        log.waiting.appendleft((_partial, value))  # the answer parsed so far, next
    return TextDelta(log.run_id, seq, None, text)


def _partial(log: EventLog, note: Note, seq: int) -> RunEvent:
    return OutputPartial(log.run_id, seq, None, note[1])


def _thinking(log: EventLog, note: Note, seq: int) -> RunEvent:
    return ThinkingDelta(log.run_id, seq, None, note[2])


def _opened(log: EventLog, note: Note, seq: int) -> RunEvent:
    """A call's first argument delta: its ``tool_call_started``, then that delta, if it has text.

    The delta's note goes in front of the queue, to build its own event next.
    """
    _, call_id, delta, name = note
    if delta:
        log.waiting.appendleft((_arguments, call_id, delta, name))
    return ToolCallStarted(log.run_id, seq, None, call_id, name)


def _arguments(log: EventLog, note: Note, seq: int) -> RunEvent:
    return ToolCallArgsDelta(log.run_id, seq, None, note[1], note[2])


def _call(log: EventLog, note: Note, seq: int) -> RunEvent:
    """A call that came whole (no argument delta): its start; its being ready is built next."""
    call = note[1]
    log.waiting.appendleft((_ready, call))
    return ToolCallStarted(log.run_id, seq, None, call.id, call.name)


def _ready(log: EventLog, note: Note, seq: int) -> RunEvent:
    return ToolCallReady(log.run_id, seq, None, note[1])


def _done(log: EventLog, note: Note, seq: int) -> None:
    """The answer done (no event): the next answer's typed output is new."""
    if log.partials is not None:  # noted only then
        log.parser = log.partials()


#: The event a span's opening or closing makes, by the span's name.
OPENED = {
    "turn": _turn_started,
    "model_call": _request_started,
    "tool_call": _tool_started,
    "run": _run_started,
}
CLOSED = {
    "tool_call": _tool_finished,
    "model_call": _usage_update,
    "fold": _fold,
    "compaction": _fold,
    "run": _child_finished,
}


#: The note of an answer's end, when its typed output is parsed (the same each time).
DONE: Note = (_done,)


def model_sink(log: EventLog) -> Callable[[StreamEvent], None]:
    """The stream sink that notes a model's stream events for the run's events.

    It only notes them, joining a delta onto the one before it while the consumer is behind:
    the consumer builds the events (a call's start, its arguments, its being ready, the typed
    output parsed so far) as it takes the notes. Which calls of the answer have started is
    known here, as each is noted: an answer's end needs no note unless typed output is parsed.
    """
    waiting, delta = log.waiting, log.delta
    #: The calls of the answer being streamed whose ``tool_call_started`` is noted.
    started: set[str] = set()

    def sink(event: StreamEvent) -> None:
        kind = event.kind
        if kind == "text":
            if event.text:
                delta(_text, "", event.text, "")
        elif kind == "tool_call":
            if (call := event.tool_call) is not None:
                if call.id in started:  # its start came with its first argument delta
                    waiting.append((_ready, call))  # log.put, inlined (a call a turn)
                else:
                    started.add(call.id)
                    waiting.append((_call, call))
                if log.waiter is not None:
                    log.wake()
        elif kind == "done":
            started.clear()
            if log.partials is not None:
                log.put(DONE)
        elif kind == "tool_call_delta":
            if (call := event.tool_call) is not None:
                if call.id not in started:
                    started.add(call.id)
                    log.put((_opened, call.id, call.arguments, call.name))
                elif call.arguments:  # a delta without text only starts the call
                    delta(_arguments, call.id, call.arguments, call.name)
        elif kind == "reasoning" and event.text:
            delta(_thinking, "", event.text, "")

    return sink
