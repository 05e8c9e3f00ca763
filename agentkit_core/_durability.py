"""Where a run's state is kept, and when it is written: the run's durability points.

A run is kept by its session (the recorder's batches) and by a checkpointer (the agent's, or
its context's checkpointer or store). Every durability point of the loop (a turn's results, a
hold for a person, the answer, a failure, the in-flight mark of a batch that must not run
twice) passes through :func:`persist`: the checkpoint first, then the session's batch. A run
nothing keeps skips them all, and a session alone in a store that never waits is written
without an await (:func:`persisted_now`).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ._context import RunContext
from ._recorder import NullRecorder
from ._run_state import RunState

if TYPE_CHECKING:
    from ._agent import Agent
    from ._checkpoint import Checkpointer


def keeps_state(agent: Agent, ctx: RunContext) -> bool:
    """Whether something keeps the run's state: a session, or a checkpointer :func:`persist` finds.

    What :func:`~agentkit_core._checkpoint.resolve_checkpointer` would resolve from, read
    without resolving: a run with none of them has nothing to persist or mark.
    """
    return (
        type(ctx.recorder) is not NullRecorder
        or (agent.checkpointer is not None and ctx.checkpoint_at is None)
        or ctx.checkpointer is not None
        or ctx.store is not None
    )


def checkpointer_of(explicit: object = None, ctx: RunContext | None = None) -> Checkpointer | None:
    """:func:`~agentkit_core._checkpoint.resolve_checkpointer`, quick when there is none.

    A run without a checkpointer (explicit, ``ctx.checkpointer`` or ``ctx.store``) does not
    load the checkpoint module.
    """
    if explicit is None and (ctx is None or (ctx.checkpointer is None and ctx.store is None)):
        return None
    from ._checkpoint import resolve_checkpointer

    return resolve_checkpointer(explicit, ctx)


def run_checkpointer(agent: Agent, ctx: RunContext) -> Checkpointer | None:
    """The checkpointer the run's durability points write to, or None.

    The agent's own for a run of its own; a child agent's run (``ctx.checkpoint_at``) writes
    under its parent's run, to the checkpointer its context carries.
    """
    return checkpointer_of(agent.checkpointer if ctx.checkpoint_at is None else None, ctx)


def persisted_now(agent: Agent, ctx: RunContext) -> bool:
    """``persist(agent, ctx, state, "running")`` done without an await, when it can be.

    It can when only a session keeps the run and its store's append never waits: a turn's
    persist, and a batch's in-flight mark, is then its session's batch, appended here with no
    coroutine made for it.
    """
    return run_checkpointer(agent, ctx) is None and ctx.recorder._flush_now()


async def persist(agent: Agent, ctx: RunContext, state: RunState, status: str) -> None:
    """Every durability point of a run passes here: its checkpoint, then its session's batch.

    On the way out of a failed run a failure to record is not raised over the run's own
    error (the batch stays with the recorder).
    """
    if (checkpointer := run_checkpointer(agent, ctx)) is not None:
        if ctx.checkpoint_at is None:
            run_id, namespace = ctx.run_id, "agent"
            metadata = {"agent": agent.name}
        else:
            run_id, namespace = ctx.checkpoint_at
            metadata = {"agent": agent.name, "run_id": ctx.run_id}
        state.scratchpad = dict(ctx.scratchpad)
        state.note_spending(ctx)
        await checkpointer.snapshot(run_id, state, status, metadata, namespace=namespace, ctx=ctx)
    if type(ctx.recorder) is NullRecorder:
        return  # nothing to flush
    if status != "failed":
        await ctx.recorder.flush()
    else:
        with contextlib.suppress(Exception):
            await ctx.recorder.flush()
