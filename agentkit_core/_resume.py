"""Continuing a run (``Agent.resume``): from its checkpoint, or from its session's leaf.

The saved state is read back and checked, the person's answers are checked against what the run
held, and the pending batch is settled (approved calls run, refused ones become tool errors, a
batch a stopped process left in flight runs again only where that is safe) before the loop goes
on.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from ._approvals import Answers
from ._approvals import Approval
from ._approvals import answers_of
from ._approvals import decided_again
from ._approvals import refusal_verdicts
from ._approvals import settle as settle_call
from ._checkpoint import SUSPENDED
from ._checkpoint import TAINTED
from ._checkpoint import resolve_checkpointer
from ._context import RunContext
from ._context import unread
from ._durability import persist
from ._errors import ApprovalRefused
from ._errors import ConfigError
from ._handoff import hand_off
from ._handoff import resumed_agent
from ._handoff import taken_handoff
from ._hooks import ToolDecision
from ._messages import ToolCall
from ._messages import Usage
from ._models import ModelSettings
from ._models import StreamEvent
from ._policy import grant_scope
from ._recorder import NullRecorder
from ._requests import WorkingContext
from ._run_state import AgentResult
from ._run_state import RunState
from ._run_state import restored
from ._tool_calls import Suspend
from ._tool_calls import decide
from ._tool_calls import execute_marked
from ._tool_calls import interrupted_outcome
from ._tool_calls import may_rerun
from ._tools import Tool
from ._verdicts import Verdict

if TYPE_CHECKING:
    from ._agent import Agent

#: Goes on with a resumed run's loop under the agent a settled batch handed it to.
GoOn = Callable[["Agent"], Awaitable[AgentResult]]


async def resume_run(
    agent: Agent,
    run_id: str,
    approvals: Answers,
    *,
    ctx: RunContext | None,
    wc: WorkingContext | None,
    settings: ModelSettings | None,
    on_event: Callable[[StreamEvent], None] | None,
) -> AgentResult:
    """:meth:`Agent.resume <agentkit_core.Agent.resume>`: see there."""
    merged = agent._settings_for(settings)
    ctx = ctx if ctx is not None else unread(agent.new_context(run_id))
    if ctx.run_id != run_id:
        raise ConfigError(
            f"resume({run_id!r}) was given a context of run {ctx.run_id!r}",
            value=ctx,
            source="Agent.resume",
        )
    state, suspended = await _saved_run(agent, ctx, run_id)
    if state.agent and state.agent != agent.name:  # handed off: it goes on under that agent
        agent = await resumed_agent(agent, state.agent, ctx, run_id)
    held = state.pending if suspended else []
    ctx = agent._bind(ctx)
    answers = await _checked_answers(ctx, approvals, held, state, run_id)
    tools = await agent._current_tools()
    _check_approved_tools(agent, run_id, held, answers, tools)
    ctx.scratchpad.update(state.scratchpad)  # the run's own notes win over the caller's
    _carry_spending(ctx, state)
    wc = wc if wc is not None else WorkingContext()
    go_on = partial(_go_on, ctx, state, wc, merged, on_event)
    settle = partial(_settle, agent, ctx, state, tools, answers, suspended, go_on)
    return await agent._drive(
        state, ctx, wc, merged, on_event, settle=settle if state.pending else None
    )


def _carry_spending(ctx: RunContext, state: RunState) -> None:
    """What the run spent before it was suspended or cut, so its cost and budget span both."""
    ctx.usage = ctx.usage + state.usage
    ctx.spent += state.spent
    ctx.unpriced.update(state.unpriced)
    for model, usage in state.usage_by_model.items():
        known = ctx.usage_by_model.get(model)
        ctx.usage_by_model[model] = usage if known is None else known + usage
    ctx.tool_calls += state.tool_calls


async def _saved_run(agent: Agent, ctx: RunContext, run_id: str) -> tuple[RunState, bool]:
    """The run's state as last saved, and whether it suspended (else it was cut short)."""
    checkpointer = resolve_checkpointer(agent.checkpointer, ctx)
    if checkpointer is not None:
        saved = await checkpointer.resume(run_id, include_terminal=True)
        if saved is not None and saved.status == TAINTED:
            raise ConfigError(
                f"cannot resume run {run_id!r}: a person gave it a secret answer "
                f"(secret=True), so nothing of it was written after that to "
                f"{checkpointer.store} and it cannot be resumed (resuming from an earlier "
                "version would run its tools again); start a new run instead",
                value=run_id,
                source="Agent.resume",
            )
        if saved is None or saved.terminal:
            found = "has no checkpoint" if saved is None else f"is {saved.status}"
            raise ConfigError(
                f"cannot resume run {run_id!r}: it {found} in {checkpointer.store}; only "
                "a suspended or running run continues (start a new run instead)",
                value=run_id,
                source="Agent.resume",
            )
        state = restored(saved)
        suspended = saved.status == SUSPENDED
    elif ctx.recorder.enabled:  # the run in progress at the session's leaf
        session = ctx.recorder.state
        transcript = ctx.recorder.run_transcript(run_id, agent.model.name)
        calls = list(session.pending)
        state = RunState(session.task, transcript, session.turns, calls, session.decisions)
        state.usage = sum(session.run_usage.values(), Usage())
        state.spent, state.unpriced = session.run_cost, sorted(session.run_unpriced)
        state.usage_by_model = dict(session.run_usage)
        state.agent = session.agent
        suspended = bool(session.held)  # else calls without results: a batch cut short
    else:
        raise ConfigError(
            f"cannot resume run {run_id!r}: agent {agent.name!r} has no checkpointer; pass "
            "checkpointer= to the Agent (or set ctx.checkpointer or ctx.store), or a "
            "recorder= of the session that holds the run",
            value=run_id,
            source="Agent.resume",
        )
    return state, suspended


async def _checked_answers(
    ctx: RunContext,
    approvals: Answers,
    held: list[ToolCall],
    state: RunState,
    run_id: str,
) -> dict[str, Approval]:
    """The person's answers by call id, checked against what the run held on an ask.

    An answer the run cannot take is put on the record before it is raised, and nothing of the
    run moves.
    """
    try:
        return Approval.checked(
            approvals,
            held,
            run_id=run_id,
            decisions=state.verdicts or None,
            source="Agent.resume",
        )
    except ApprovalRefused as refused:  # on the record, and nothing of the run moves
        for verdict in refusal_verdicts(refused, answers_of(approvals), held):
            ctx.report_verdict(verdict)
        if type(ctx.recorder) is not NullRecorder:
            await ctx.recorder.flush()
        raise


def _check_approved_tools(
    agent: Agent,
    run_id: str,
    held: list[ToolCall],
    answers: dict[str, Approval],
    tools: dict[str, Tool],
) -> None:
    """An approved call must find its tool: the run goes on with the tools it started with."""
    approved = {c for c, a in answers.items() if a.approved}
    missing = [c for c in held if c.id in approved and c.name not in tools]
    if missing:
        raise ConfigError(
            f"cannot run the approved call {missing[0].id!r} of run {run_id!r}: agent "
            f"{agent.name!r} has no tool {missing[0].name!r} (its tools: "
            f"{', '.join(sorted(tools)) or 'none'}); resume with the tools the run was "
            "started with, or refuse the call",
            value=missing[0].id,
            source="Agent.resume",
        )


async def _settle(
    agent: Agent,
    ctx: RunContext,
    state: RunState,
    tools: dict[str, Tool],
    answers: dict[str, Approval],
    suspended: bool,
    go_on: GoOn,
) -> AgentResult | None:
    """Settle the pending batch; a result when it is held again, or handed off, instead."""
    if not suspended:  # calls in flight when the run's process stopped
        return await _recover(agent, ctx, state, tools, go_on)
    # A call the person answered is checked against the policy again (a deny it now
    # makes stands); any other is decided again in full. A checkpoint that does not say
    # what was decided on each call has every call decided again in full.
    recorded = bool(state.verdicts)
    decisions = []
    for call in state.pending:
        answer = answers.get(call.id)
        if answer is not None and recorded:
            now = decided_again(agent.policy, call, grant_scope(ctx))
        else:
            now = await decide(agent, ctx, call)
        decisions.append(settle_call(ctx, call, now, answer))
    return await _settled(agent, ctx, state, tools, decisions, go_on)


async def _recover(
    agent: Agent, ctx: RunContext, state: RunState, tools: dict[str, Tool], go_on: GoOn
) -> AgentResult | None:
    """Settle the calls a stopped process left in flight: none runs twice unless it may.

    A call of a tool that may run twice (``idempotent``, or without ``side_effects``) is
    decided again and run. Any other's outcome is unknown: the model is told so, or, when
    the executor's ``interrupted`` is ``"ask"``, the run suspends with those calls held for
    a person (approving one runs it again).
    """
    calls = state.pending
    again = {c.id for c in calls if may_rerun(tools.get(c.name))}
    if getattr(agent.executor, "interrupted", "report") == "ask" and len(again) < len(calls):
        unknown = tuple(c for c in calls if c.id not in again)
        verdicts = {c.id: "allow" if c.id in again else "ask" for c in calls}
        reason = f"resume: the outcome of {', '.join(c.id for c in unknown)} is unknown"
        for call in unknown:  # on the record as held, as a hook's ask would be
            why = interrupted_outcome(call.name)
            ctx.report_verdict(
                Verdict(
                    "hook",
                    "before_tool_call",
                    "ask",
                    call.name,
                    call.id,
                    reason=why,
                    plugin=agent.executor.name,
                )
            )
        return await agent._hold(ctx, state, Suspend(unknown, reason, verdicts))
    decisions = []
    for call in calls:
        now = await decide(agent, ctx, call)
        if now.kind == "allow" and call.id not in again:
            now = ToolDecision("deny", interrupted_outcome(call.name), "resume")
        decisions.append(settle_call(ctx, call, now, None))
    return await _settled(agent, ctx, state, tools, decisions, go_on)


async def _settled(
    agent: Agent,
    ctx: RunContext,
    state: RunState,
    tools: dict[str, Tool],
    decisions: Sequence[ToolDecision | None],
    go_on: GoOn,
) -> AgentResult | None:
    """Run the pending batch as ``decisions`` say and checkpoint the run past it.

    A handoff the batch took goes on under its target here (the result is that run's).
    """
    outcome = await execute_marked(agent, ctx, state, state.pending, tools, decisions)
    state.transcript.extend(outcome)
    ctx.recorder.record_messages(ctx, outcome, source="tool")
    taken = taken_handoff(state.pending, tools, outcome)
    state.pending, state.verdicts = [], {}
    if taken is not None:
        agent = await hand_off(agent, taken, ctx, state)
    await persist(agent, ctx, state, "running")
    return None if taken is None else await go_on(agent)


async def _go_on(
    ctx: RunContext,
    state: RunState,
    wc: WorkingContext,
    settings: ModelSettings,
    sink: Callable[[StreamEvent], None] | None,
    agent: Agent,
) -> AgentResult:
    """The resumed run's loop under ``agent``, the one its settled batch handed it to."""
    return await agent._loop(state, ctx, wc, settings, sink)
