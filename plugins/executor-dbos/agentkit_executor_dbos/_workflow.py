"""The one DBOS workflow: an agent run, by the agent's name and the task.

Imported (and so registered with DBOS) before DBOS launches in a process that runs or serves
runs; a process that only submits or reads results never imports it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from dbos import DBOS

from agentkit_core import Agent
from agentkit_core import AgentResult
from agentkit_core import Approval
from agentkit_core import ApprovalRefused
from agentkit_core import ConfigError
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core.plugin import resolve_checkpointer

from ._runtime import APPROVALS
from ._runtime import EXECUTION
from ._runtime import PENDING
from ._runtime import RUN_CONTEXT
from ._runtime import RUNTIME
from ._runtime import WORKFLOW
from ._runtime import answers_for
from ._stream import STREAM
from ._stream import RunStream
from ._stream import finish


@DBOS.workflow(name=WORKFLOW)
async def agentkit_run(agent: str, task: str, stream: bool = False) -> AgentResult:
    """Run the agent named ``agent`` on ``task``; the run's id is the workflow's.

    ``stream``: publish the run's events (``_stream``).
    """
    served = RUNTIME.agents.get(agent)
    if served is None:
        raise ConfigError(
            f"this worker serves no agent named {agent!r} (it serves: "
            f"{', '.join(sorted(RUNTIME.agents)) or 'none'}); submit with agent= one of them, "
            "or start a worker for it",
            value=agent,
            source="DBOSExecutor.submit(agent=)",
        )
    run_id = DBOS.workflow_id
    assert run_id is not None
    token = EXECUTION.set(uuid.uuid4().hex)  # this execution, told from earlier ones
    events = RunStream() if stream else None
    streaming = STREAM.set(events)
    on_event = None if events is None else events.put
    store: dict[str, str] = {}
    try:
        result = await served.run(task, ctx=_context(served, run_id, store), on_event=on_event)
        suspension = 1  # which suspension of the run the calls published are: answers name it
        while result.status == "suspended":  # a call waits for a person: wait durably
            held = {"suspension": suspension, "calls": list(result.pending)}
            await DBOS.set_event_async(PENDING, held)
            message = await DBOS.recv_async(APPROVALS, timeout_seconds=RUNTIME.approval_timeout)
            if message is None:  # nobody answered in time: the run ends suspended
                break
            answer = answers_for(message, suspension)
            if answer is None:  # answers for an earlier suspension: stale, dropped
                continue
            accepted = _accepted(answer, result.pending, run_id)
            if accepted is None:  # not answers at all (sent around approve()): wait on
                continue
            if accepted:  # else the list stays up
                await DBOS.set_event_async(PENDING, {"suspension": suspension, "calls": []})
            ctx = _context(served, run_id, store)
            try:
                result = await served.resume(run_id, answer, ctx=ctx, on_event=on_event)
            except ApprovalRefused:  # an answer sent around approve()'s check: the run
                continue  # put the refusal on its record and waits on for its calls
            suspension += 1

        if events is not None:
            await finish(result)
        return result
    finally:
        STREAM.reset(streaming)
        EXECUTION.reset(token)


def _accepted(answer: Any, held: Sequence[ToolCall], run_id: str) -> bool | None:
    """Whether ``Agent.resume`` takes ``answer`` for the calls ``held`` (it says why not).

    None: ``answer`` is no answer at all (a call both approved and refused, a shape answers
    never take), which the run cannot even put on its record; it is dropped, not read.
    """
    try:
        Approval.checked(answer, held, run_id=run_id)
    except ApprovalRefused:
        return False
    except (ConfigError, TypeError):
        return None
    return True


class _Store:
    """The run's key-value store (``ctx.store``) when the agent has no checkpointer of its own.

    What a suspended run is resumed from; rebuilt by replaying the workflow, so it needs no
    durability of its own.
    """

    def __init__(self, data: dict[str, str]) -> None:
        self.data = data

    async def get(self, key: str) -> str | None:
        return self.data.get(key)

    async def put(self, key: str, value: str) -> None:
        self.data[key] = value


def _context(agent: Agent, run_id: str, store: dict[str, str]) -> RunContext:
    ctx = agent.new_context(run_id)
    if resolve_checkpointer(agent.checkpointer, ctx) is None:
        ctx.store = _Store(store)
    RUN_CONTEXT.set(ctx)  # the workflow's task: a replayed model step's usage goes here
    return ctx
