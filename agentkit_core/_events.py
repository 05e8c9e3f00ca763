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
from dataclasses import field
from typing import TYPE_CHECKING
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


@dataclass(slots=True)
class EventLog:
    """Numbers a run's events and hands each to ``sink``, in the run's own task.

    ``run_id`` is the top run's: a child agent's run shares its parent's log (its events are
    stamped with its own run id, numbered in the one sequence).
    """

    run_id: str
    sink: Callable[[RunEvent], None]
    seq: int = 0
    total: Usage = field(default_factory=Usage)
    #: Each open run span's id → (run id, agent), for the child-run events.
    _runs: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: The last request estimated, and its estimate (see :meth:`estimate`).
    _sent: tuple[Message, ...] = ()
    _sent_tokens: int = 0

    def estimate(self, messages: tuple[Message, ...]) -> int:
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
    ) -> RunEvent:
        """Build a ``cls`` event with the next sequence number and hand it to every subscriber."""
        self.seq += 1
        event = cls(run_id or self.run_id, self.seq, item_id, **fields)
        self.sink(event)
        return event

    def span_opened(self, span: Span) -> None:
        name, at = span.name, span.attributes
        run = span.run_id
        if name == "turn":
            self.emit(TurnStarted, run, turn=at.get("turn", 0))
        elif name == "model_call":
            self.emit(
                ModelRequestStarted,
                run,
                messages=at.get("messages", 0),
                estimated_tokens=at.get("estimated_tokens", 0),
            )
        elif name == "tool_call":
            self.emit(
                ToolStarted,
                run,
                call_id=at.get("call_id", ""),
                name=at.get("tool", ""),
                arguments=span.payload.get("arguments", {}),
            )
        elif name == "run":
            agent = str(at.get("agent", ""))
            self._runs[span.span_id] = (run or "", agent)
            if run != self.run_id:
                self.emit(ChildRunStarted, child_run_id=run or "", agent=agent)
            else:
                self.emit(
                    RunStarted,
                    item_id=at.get("task_item"),
                    agent=agent,
                    model=str(at.get("model", "")),
                    session_id=at.get("session_id"),
                )

    def span_closed(self, span: Span) -> None:
        name, at = span.name, span.attributes
        run = span.run_id
        if name == "tool_call":
            self.emit(
                ToolFinished,
                run,
                call_id=at.get("call_id", ""),
                name=at.get("tool", ""),
                result=span.payload.get("result"),
                is_error=bool(at.get("is_error", span.error is not None)),
                duration=span.duration or 0.0,
                error=span.error,
            )
        elif name == "model_call" and span.error is None:
            request = Usage(
                input_tokens=at.get("input_tokens", 0),
                output_tokens=at.get("output_tokens", 0),
                cache_read_tokens=at.get("cache_read_tokens", 0),
                cache_write_tokens=at.get("cache_write_tokens", 0),
                reasoning_tokens=at.get("reasoning_tokens", 0),
                requests=1,
            )
            self.total = self.total + request
            self.emit(
                UsageUpdate,
                run,
                model=str(at.get("model") or ""),
                request=request,
                total=self.total,
                cost=at.get("cost"),
            )
        elif name in ("fold", "compaction"):
            self.emit(
                CompactionFold,
                run,
                compactor=str(at.get("compactor", "folding")),
                messages=at.get("fold_messages"),
                tokens_before=at.get("fold_tokens_before"),
                tokens_after=at.get("fold_tokens_after"),
                error=at.get("fold_error") or span.error,
            )
        elif name == "run":
            child, agent = self._runs.pop(span.span_id, (run or "", ""))
            if child != self.run_id:
                status = str(at.get("status", "failed" if span.error else "done"))
                self.emit(ChildRunFinished, child_run_id=child, agent=agent, status=status)

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
            log.emit(TextDelta, text=event.text)
            if parser is not None and (value := parser.feed(event.text)) is not None:
                log.emit(OutputPartial, value=value)
        elif kind == "reasoning" and event.text:
            log.emit(ThinkingDelta, text=event.text)
        elif kind == "tool_call_delta" and event.tool_call is not None:
            call = event.tool_call
            start(call)
            if call.arguments:
                log.emit(ToolCallArgsDelta, call_id=call.id, delta=call.arguments)
        elif kind == "tool_call" and event.tool_call is not None:
            start(event.tool_call)
            log.emit(ToolCallReady, call=event.tool_call)
        elif kind == "done":
            started.clear()
            if partials is not None:
                parser = partials()

    return sink
