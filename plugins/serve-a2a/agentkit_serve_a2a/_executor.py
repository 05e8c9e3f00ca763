"""The kit as an A2A agent: an ``AgentExecutor`` over a session per context.

The A2A context id is the session id: each context is its own session of the kit's store (its
recorder, transcript and skill grants), and a task is one run in it. The answer's text streams
as one artifact (``answer``), chunk by chunk. A call held for approval puts the task in
``input-required`` with a message naming the calls (and a data part listing them); the
client's next message on that task answers them: a data part ``{"approved": true|false}`` (or
``{"approvals": {call id: bool}}``), or the text ``yes``/``approve`` or ``no``/``deny``. A
message that answers no call clearly (an ``approved`` that is not a boolean, an id no call
held, other words) leaves the calls waiting, and the task asks again, saying what to send.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import Any

from a2a.helpers import get_data_parts
from a2a.helpers import new_data_part
from a2a.server.agent_execution import AgentExecutor
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from a2a.types import Task
from a2a.types import TaskState
from a2a.types import TaskStatus
from a2a.utils.errors import InvalidParamsError

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Recorder
from agentkit_core import ToolCall
from agentkit_core import events as ev

from ._tasks import PREFIX

#: The id of the artifact the answer's text streams into.
ANSWER = "answer"
YES = frozenset({"yes", "y", "approve", "approved", "ok", "allow"})
NO = frozenset({"no", "n", "deny", "denied", "refuse", "reject"})
#: How a client answers the calls a task waits on.
ASK_AGAIN = (
    'answer yes or no, or with a data part {"approved": true|false} '
    '(or {"approvals": {call id: true|false}})'
)


class KitExecutor(AgentExecutor):
    """Runs the kit's agent for each A2A task, in its context's session."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.agent = Agent.from_config(kit.config())

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        recorder = await self.recorder(context_id)
        waiting = context.current_task is not None and context.current_task.status.state == (
            TaskState.TASK_STATE_INPUT_REQUIRED
        )
        if context.current_task is None:  # a new task: the client is told it first
            history = [context.message] if context.message is not None else []
            # already working: a "submitted" task and then a "working" update would be one more
            # store write and one more event the SDK sends before the answer's first text
            working = TaskStatus(state=TaskState.TASK_STATE_WORKING)
            working.timestamp.FromDatetime(datetime.now(UTC))
            task = Task(id=task_id, context_id=context_id, status=working, history=history)
            await event_queue.enqueue_event(task)
        run_id, held = recorder.state.run, recorder.state.held
        if waiting and context.current_task is not None:
            stale = replaced(context.current_task, run_id, [c.id for c in held])
            if stale is not None:  # its calls are gone: a yes here must approve nothing else
                await fail(updater, stale)
                return
        try:
            approvals = answers(context, [c.id for c in held]) if waiting and run_id else None
        except NotAnAnswer as exc:  # the calls wait on, and the client is told what to send
            parts = [Part(text=str(exc)), pending_part(run_id or "", held)]
            await updater.requires_input(updater.new_agent_message(parts))
            return
        if context.current_task is not None:
            await updater.start_work()
        wc = recorder.working_context(self.agent.model.name)
        if approvals and run_id:
            ctx = self.agent.new_context(run_id)
            ctx.recorder = recorder
            events = self.agent.resume_stream_events(run_id, approvals, ctx=ctx, wc=wc)
        else:
            ctx = self.agent.new_context()
            ctx.recorder = recorder
            events = self.agent.run_stream_events(context.get_user_input(), ctx=ctx, wc=wc)
        await self.follow(events, updater)

    async def recorder(self, context_id: str) -> Recorder:
        """The recorder of the context's session, or the client's invalid params (-32602).

        A context id no conversation may have is refused by name before anything is written.
        ``a2a-task:<id>`` is refused: it is the session a task is kept in, so a conversation
        there would write over that task's record and the task would be gone.
        """
        if context_id.startswith(PREFIX):
            raise InvalidParamsError(
                f"context id {context_id!r} names where task {context_id[len(PREFIX) :]!r} is "
                f"kept, not a conversation; choose a context id that does not start with "
                f"{PREFIX!r}"
            )
        try:
            return await self.kit.recorder_for(context_id)
        except ConfigError as exc:
            raise InvalidParamsError(f"context id {context_id!r}: {exc}") from None

    async def follow(self, events: Any, updater: TaskUpdater) -> None:
        """Turn the run's events into the task's artifact chunks and its last status."""
        streamed = ended = False
        try:
            async for event in events:
                if isinstance(event, ev.TextDelta):
                    await chunk(updater, event.text, append=streamed, last=False)
                    streamed = True
                elif isinstance(event, ev.RunSuspended):
                    ended = True
                    await updater.requires_input(held_message(updater, event))
                elif isinstance(event, ev.RunFinished):
                    ended = True
                    await chunk(updater, "", append=streamed, last=True)
                    await updater.complete()
                elif isinstance(event, ev.RunFailed):
                    ended = True
                    await fail(updater, f"{event.error_type}: {event.error}")
        except Exception as exc:  # a run's own error was told as its last event already
            if not ended:
                await fail(updater, f"{type(exc).__name__}: {exc}")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """The framework cancels the running ``execute``; the task is marked canceled."""
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


async def chunk(updater: TaskUpdater, text: str, *, append: bool, last: bool) -> None:
    """One chunk of the answer's artifact."""
    parts = [Part(text=text)]
    await updater.add_artifact(
        parts, artifact_id=ANSWER, name=ANSWER, append=append, last_chunk=last
    )


async def fail(updater: TaskUpdater, text: str) -> None:
    await updater.failed(updater.new_agent_message([Part(text=text)]))


def held_message(updater: TaskUpdater, event: ev.RunSuspended) -> Any:
    """What the client is asked: the held calls, in words and as data."""
    named = ", ".join(f"{c.name}({c.arguments})" for c in event.pending)
    text = f"approve {named}? answer yes or no ({event.reason})"
    return updater.new_agent_message([Part(text=text), pending_part(event.run_id, event.pending)])


def pending_part(run_id: str, calls: Sequence[ToolCall]) -> Part:
    """The held calls as data, ``{"pending": [{"id", "tool", "arguments"}], "run": id}``.

    The run id is what a later answer on the task is checked against (:func:`replaced`).
    """
    pending = [{"id": c.id, "tool": c.name, "arguments": c.arguments} for c in calls]
    return new_data_part({"pending": pending, "run": run_id})


def replaced(task: Task, run_id: str | None, held: list[str]) -> str | None:
    """Why ``task`` can no longer answer for the calls it asked about, or None if it can.

    A later message in the context starts another run, which replaces the one the task
    waits on: the context's held calls are then that run's (or none), and an answer on this
    task would approve calls it never showed. A task whose question carries no data part
    (written before the run id was) is checked by nothing here, as before.
    """
    asked = None
    if task.status.HasField("message"):
        for data in get_data_parts(task.status.message.parts):
            if isinstance(data, dict) and isinstance(data.get("pending"), list):
                asked = data
    if asked is None:
        return None
    ids = {c.get("id") for c in asked["pending"] if isinstance(c, dict)}
    run = asked.get("run")
    if run_id and held and (run is None or run == run_id) and ids == set(held):
        return None
    return (
        "the calls this task asked about are no longer held: a later message in this context "
        "started another run, which replaced this task's; send a new message, or answer the "
        "task that asks now"
    )


class NotAnAnswer(Exception):
    """A message on a task waiting for approval that answers none of its calls clearly."""


def answers(context: RequestContext, held: list[str]) -> dict[str, bool] | None:
    """The client's answers to the held calls, from its message's data or its text.

    Only a boolean answers: ``{"approvals": {"c1": "false"}}`` or ``{"approved": 0}`` raises
    :class:`NotAnAnswer` rather than being read as yes, as does an id no call held.
    """
    if not held:
        return None
    message = context.message
    for data in get_data_parts(message.parts) if message is not None else ():
        if not isinstance(data, dict) or not {"approvals", "approved"} & set(data):
            continue
        given = data.get("approvals", {call: data.get("approved") for call in held})
        if not isinstance(given, dict) or not given:
            raise NotAnAnswer(f"'approvals' is {given!r}: {ASK_AGAIN}")
        unclear = {call: said for call, said in given.items() if not isinstance(said, bool)}
        if unclear:
            raise NotAnAnswer(f"{unclear!r} answers neither yes nor no: {ASK_AGAIN}")
        unknown = sorted(set(given) - set(held))
        if unknown:
            raise NotAnAnswer(f"no call {', '.join(unknown)} waits here; {ASK_AGAIN}")
        return dict(given)
    said = context.get_user_input().strip().lower().rstrip(".!")
    if said in YES or said in NO:
        return {call: said in YES for call in held}
    raise NotAnAnswer(ASK_AGAIN)
