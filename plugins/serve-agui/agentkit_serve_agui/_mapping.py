"""A run's events as AG-UI events, one to one (docs/serve.md has the table).

AG-UI brackets what agentkit streams as deltas: a text message has a start and an end around
its content, so the mapper opens one on the first text delta and closes it at the next event
that is not text. A turn is an AG-UI step. The events AG-UI has no type of its own for (a
verdict, a memory write, a fold, a retry, usage, a child run, progress, a partial output) go
as ``CUSTOM`` events named by their agentkit kind, their value the event's JSON.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from ag_ui import core as ag

from agentkit_core import events as ev
from agentkit_core.plugin import jsonable

#: The ``reason`` of the interrupt a call held for approval is.
APPROVAL = "tool_approval"
#: What an interrupt's answer is: ``{"approved": false}`` refuses the call, ``true`` (or no
#: payload) approves it; the endpoint refuses any other payload (``_app.approved``).
APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}},
    "additionalProperties": False,
}


def _id() -> str:
    return uuid.uuid4().hex


def interrupt_id(call_id: str, run_id: str) -> str:
    """The id of the interrupt a held call is: the call's id and the run that holds it.

    A model may reuse a call id in another run (``call_0``), so a call id alone would let
    an answer to one run's interrupt approve the call another run holds under that id.
    """
    return f"{call_id}@{run_id}"


def text_of(result: object) -> str:
    """A tool result (text, parts, anything JSON-ready) as the text AG-UI carries."""
    if isinstance(result, str):
        return result
    import json

    return json.dumps(jsonable(result))


class Mapper:
    """Turns one run's events into AG-UI events, keeping what is open between them."""

    def __init__(self, thread_id: str, run_id: str) -> None:
        self.thread_id, self.run_id = thread_id, run_id
        self.started = False
        self._text: str | None = None  # the open text message's id
        self._reasoning: str | None = None
        self._step: str | None = None
        self._calls: set[str] = set()  # the calls whose start was sent
        self._streamed: set[str] = set()  # the calls some of whose arguments were sent

    def run_started(self) -> ag.BaseEvent:
        self.started = True
        return ag.RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)

    def map(self, event: ev.RunEvent) -> list[ag.BaseEvent]:
        """The AG-UI events ``event`` is, after closing what it ends."""
        out: list[ag.BaseEvent] = []
        if not isinstance(event, ev.TextDelta):
            out += self._close_text()
        if not isinstance(event, ev.ThinkingDelta):
            out += self._close_reasoning()
        out += self._mapped(event)
        return out

    def _mapped(self, event: ev.RunEvent) -> list[ag.BaseEvent]:
        if isinstance(event, ev.RunStarted):
            return [self.run_started()]
        if isinstance(event, ev.TurnStarted):
            return [*self._close_step(), *self._open_step(f"turn {event.turn}")]
        if isinstance(event, ev.TextDelta):
            return [
                *self._open_text(),
                ag.TextMessageContentEvent(message_id=self._text or "", delta=event.text),
            ]
        if isinstance(event, ev.ThinkingDelta):
            return [
                *self._open_reasoning(),
                ag.ReasoningMessageContentEvent(message_id=self._reasoning or "", delta=event.text),
            ]
        if isinstance(event, ev.ToolCallStarted):
            return self._start_call(event.call_id, event.name)
        if isinstance(event, ev.ToolCallArgsDelta):
            self._streamed.add(event.call_id)
            return [ag.ToolCallArgsEvent(tool_call_id=event.call_id, delta=event.delta)]
        if isinstance(event, ev.ToolCallReady):
            call = event.call
            args = (
                []
                if call.id in self._streamed or not call.arguments
                else [ag.ToolCallArgsEvent(tool_call_id=call.id, delta=call.arguments)]
            )  # a model that does not stream its arguments gives them whole
            return [*args, ag.ToolCallEndEvent(tool_call_id=call.id)]
        if isinstance(event, ev.ToolStarted) and event.call_id not in self._calls:
            return self._whole_call(event)  # a call the model did not stream (a resumed one)
        if isinstance(event, ev.ToolFinished):
            content = text_of(event.result) if event.result is not None else event.error or ""
            return [
                ag.ToolCallResultEvent(
                    message_id=_id(), tool_call_id=event.call_id, content=content, role="tool"
                )
            ]
        if isinstance(event, ev.RunSuspended | ev.RunFinished | ev.RunFailed):
            return [*self._close_step(), self._end(event)]
        if isinstance(event, ev.ToolStarted | ev.ApprovalRequested | ev.ModelRequestStarted):
            return []  # told already: by the call's start, by the interrupt, by the step
        return [ag.CustomEvent(name=event.kind, value=event.to_json())]

    def _end(self, event: ev.RunSuspended | ev.RunFinished | ev.RunFailed) -> ag.BaseEvent:
        if isinstance(event, ev.RunFailed):
            return ag.RunErrorEvent(message=event.error, code=event.error_type)
        if isinstance(event, ev.RunSuspended):
            interrupts = [
                ag.Interrupt(
                    id=interrupt_id(call.id, event.run_id),
                    reason=APPROVAL,
                    message=event.reason or f"{call.name} waits for a person's approval",
                    tool_call_id=call.id,
                    response_schema=APPROVAL_SCHEMA,
                    metadata={"tool": call.name, "arguments": call.arguments},
                )
                for call in event.pending
            ]
            outcome: Any = ag.RunFinishedInterruptOutcome(interrupts=interrupts)
            return ag.RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, outcome=outcome
            )
        output = event.result.output
        return ag.RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            result=jsonable(output),
            outcome=ag.RunFinishedSuccessOutcome(),
        )

    def failed(self, message: str, code: str) -> list[ag.BaseEvent]:
        """A run that failed outside the run's own events (before it began, or on a conflict)."""
        head = [] if self.started else [self.run_started()]
        return [
            *head,
            *self._close_text(),
            *self._close_step(),
            ag.RunErrorEvent(message=message, code=code),
        ]

    def _start_call(self, call_id: str, name: str) -> list[ag.BaseEvent]:
        self._calls.add(call_id)
        return [
            ag.ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name),
        ]

    def _whole_call(self, event: ev.ToolStarted) -> list[ag.BaseEvent]:
        import json

        args = json.dumps(jsonable(event.arguments))
        return [
            *self._start_call(event.call_id, event.name),
            ag.ToolCallArgsEvent(tool_call_id=event.call_id, delta=args),
            ag.ToolCallEndEvent(tool_call_id=event.call_id),
        ]

    def _open_text(self) -> list[ag.BaseEvent]:
        if self._text is not None:
            return []
        self._text = _id()
        return [ag.TextMessageStartEvent(message_id=self._text, role="assistant")]

    def _close_text(self) -> list[ag.BaseEvent]:
        if self._text is None:
            return []
        done, self._text = self._text, None
        return [ag.TextMessageEndEvent(message_id=done)]

    def _open_reasoning(self) -> list[ag.BaseEvent]:
        if self._reasoning is not None:
            return []
        self._reasoning = _id()
        return [ag.ReasoningMessageStartEvent(message_id=self._reasoning)]

    def _close_reasoning(self) -> list[ag.BaseEvent]:
        if self._reasoning is None:
            return []
        done, self._reasoning = self._reasoning, None
        return [ag.ReasoningMessageEndEvent(message_id=done)]

    def _open_step(self, name: str) -> list[ag.BaseEvent]:
        self._step = name
        return [ag.StepStartedEvent(step_name=name)]

    def _close_step(self) -> list[ag.BaseEvent]:
        if self._step is None:
            return []
        done, self._step = self._step, None
        return [ag.StepFinishedEvent(step_name=done)]


#: The frame core puts around a tool's result for the model (``frame_untrusted``).
FRAME = re.compile(r"<<UNTRUSTED id=(\w+) [^\n]*>>\n(.*)\n<<END UNTRUSTED id=\1>>", re.DOTALL)


def shown(text: str) -> str:
    """A tool result as a person reads it: without the frame the model was sent it in."""
    framed = FRAME.fullmatch(text)
    return framed.group(2) if framed else text


def messages_of(messages: list[Any]) -> list[Any]:
    """A session's transcript as AG-UI messages (for a client that reloads a thread)."""
    out: list[Any] = []
    for i, message in enumerate(messages):
        mid = f"m{i}"
        if message.role == "user":
            out.append(ag.UserMessage(id=mid, content=message.text))
        elif message.role == "assistant":
            calls = [
                ag.ToolCall(
                    id=c.id, function=ag.FunctionCall(name=c.name, arguments=c.arguments or "{}")
                )
                for c in message.tool_calls
            ]
            out.append(
                ag.AssistantMessage(id=mid, content=message.text or None, tool_calls=calls or None)
            )
        elif message.role == "tool":
            out.append(
                ag.ToolMessage(
                    id=mid, content=shown(message.text), tool_call_id=message.tool_call_id or ""
                )
            )
    return out
