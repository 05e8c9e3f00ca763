"""The tool calls of a turn: decided (policy, then the before_tool_call hooks), then run.

A batch runs concurrently up to the agent's ``max_parallel_tools`` (a sequential tool's call
alone, in its place), each call as an executor step through the invoker's middleware chain. A
batch with a call held for a person is not run: :class:`Suspend` says what the run waits on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from collections.abc import Sequence
from functools import partial
from operator import attrgetter
from time import perf_counter
from typing import TYPE_CHECKING
from typing import Any

from ._context import RunContext
from ._deadline import within
from ._durability import keeps_state
from ._durability import persist
from ._durability import persisted_now
from ._durability import run_checkpointer
from ._executor import InProcessExecutor
from ._hooks import ToolDecision
from ._hooks import fold_decisions
from ._messages import Message
from ._messages import ToolCall
from ._middleware import ToolInvocation
from ._recorder import decision_verdict
from ._records import record
from ._run_errors import BudgetExceeded
from ._run_state import RunState
from ._tools import Tool
from ._tools import ToolResult

if TYPE_CHECKING:
    from ._agent import Agent


def execute_marked(
    agent: Agent,
    ctx: RunContext,
    state: RunState,
    calls: Sequence[ToolCall],
    tools: dict[str, Tool],
    decisions: Sequence[ToolDecision | None] = (),
) -> Awaitable[list[Message]]:
    """:func:`execute_batch` a batch, first marked in flight when a call of it must not run twice.

    The mark (a RUNNING checkpoint, the session's batch, holding the batch as pending) is
    what a resume after a crash reads to not run such a call again (see InProcessExecutor).
    It is written only where something keeps it, and not under a durable executor, which
    records each step itself. Await it at once: with nothing to mark, or the mark appended at
    once (a session alone keeps the run, in a store that never waits), it is the batch's own
    awaitable, no coroutine of this function's around it.
    """
    if (
        keeps_state(agent, ctx)
        and not agent.executor.durable
        and must_mark(calls, tools, decisions, ctx)
        and not persisted_now(agent, ctx)  # a session alone: its batch, the answer, is the mark
    ):
        return _marked(agent, ctx, state, calls, tools, decisions)
    return execute_batch(agent, calls, tools, ctx, decisions)


def must_mark(
    calls: Sequence[ToolCall],
    tools: dict[str, Tool],
    decisions: Sequence[ToolDecision | None],
    ctx: RunContext,
) -> bool:
    """Whether a call of the batch that is to run must not run twice (an unknown tool's may).

    Which tools' calls must not is decided once per tool set and run, and kept on the run's
    context: a fixed list is one set a run, so a batch then costs a check of its names against
    that set, done in C when nothing was decided. A new run scans again (as the loop reads a
    set's specs again), so a tool's flags changed between runs are seen.
    """
    last = ctx._never_twice
    if last is None or last[0] is not tools:
        never = frozenset(name for name, tool in tools.items() if not may_rerun(tool))
        last = ctx._never_twice = (tools, never)
    return bool(last[1]) and not last[1].isdisjoint(
        map(_name, calls)
        if not decisions  # every call runs
        else [
            c.name for c, d in zip(calls, decisions, strict=True) if d is None or d.kind == "allow"
        ]
    )


_name = attrgetter("name")


async def _marked(
    agent: Agent,
    ctx: RunContext,
    state: RunState,
    calls: Sequence[ToolCall],
    tools: dict[str, Tool],
    decisions: Sequence[ToolDecision | None],
) -> list[Message]:
    """The batch marked in flight (the run persisted, else the session flushed), then run."""
    if run_checkpointer(agent, ctx) is None:  # only a session keeps the run (keeps_state)
        await ctx.recorder.flush()
    else:
        state.pending, state.verdicts = list(calls), {}
        await persist(agent, ctx, state, "running")
    return await execute_batch(agent, calls, tools, ctx, decisions)


def run_calls(
    agent: Agent,
    calls: Sequence[ToolCall],
    tools: dict[str, Tool],
    ctx: RunContext,
    state: RunState,
) -> Awaitable[list[Message] | Suspend]:
    """The turn's batch decided on, then run; await it at once.

    Without a policy or a before_tool_call hook nothing decides: the batch's own awaitable.
    """
    if agent.policy is None and not agent.hooks.before_tool_call:
        return execute_marked(agent, ctx, state, calls, tools)
    return _decided(agent, calls, tools, ctx, state)


async def _decided(
    agent: Agent,
    calls: Sequence[ToolCall],
    tools: dict[str, Tool],
    ctx: RunContext,
    state: RunState,
) -> list[Message] | Suspend:
    """Each call decided on; the batch held when a call asks a person, else run."""
    decisions: list[ToolDecision | None] = []
    asks: list[ToolCall] = []
    reasons: list[str] = []
    for call in calls:
        decision = await decide(agent, ctx, call)
        decisions.append(decision)
        if decision.kind == "ask":
            asks.append(call)
            reasons.append(f"{decision.source}: {decision.reason}")
    if asks:
        verdicts: dict[str, str] = {
            c.id: d.kind for c, d in zip(calls, decisions, strict=True) if d
        }
        return Suspend(tuple(asks), "; ".join(reasons), verdicts)
    return await execute_marked(agent, ctx, state, calls, tools, decisions)


async def decide(agent: Agent, ctx: RunContext, call: ToolCall) -> ToolDecision:
    """The policy's decision on ``call`` folded with the before_tool_call hooks' (theirs last).

    Each reports its own verdict: the policy with the rule that decided, the hooks' fold
    when it is more than a bare allow. The folded decision is traced as a ``verdict`` span
    when one was reported (or deciding raised); a call nobody had an opinion on gets none,
    as in a run without hooks or policy.
    """
    hooks = agent.hooks
    since = perf_counter()
    try:
        decision = None if agent.policy is None else agent.policy.check(ctx, call)
        if hooks.before_tool_call:
            hooked = await hooks.run_before_tool_call(ctx, call)
            if hooked.kind != "allow" or hooked.reason or hooked.source:
                ctx.report_verdict(decision_verdict(call, hooked))
            elif decision is None:
                return hooked  # a bare allow, and no policy: nothing to trace
            decision = hooked if decision is None else fold_decisions(decision, hooked)
    except BaseException as exc:
        ctx.trace.record("verdict", {"tool": call.name, "call_id": call.id}, since, exc)
        raise
    if decision is None:  # resuming, with neither policy nor hooks
        return ToolDecision("allow")
    ctx.trace.record(
        "verdict",
        {
            "tool": call.name,
            "call_id": call.id,
            "decision": decision.kind,
            "source": decision.source,
            "reason": decision.reason,
            "rule": decision.rule,
        },
        since,
    )
    return decision


async def execute_batch(
    agent: Agent,
    calls: Sequence[ToolCall],
    tools: dict[str, Tool],
    ctx: RunContext,
    decisions: Sequence[ToolDecision | None] = (),
) -> list[Message]:
    """Run one batch of tool calls; returns their tool messages in call order.

    Calls to tools that are not ``sequential`` run concurrently (at most
    ``max_parallel_tools`` at once); a sequential tool's call runs alone, in its place.
    """
    if len(calls) == 1:  # the usual turn: one call, nothing to schedule beside it
        only = calls[0]
        decision = decisions[0] if decisions else None
        if decision is None and not agent.hooks.after_tool_call:  # what _call would add: nothing
            done = await _invoke(agent, only, tools, ctx)
        else:
            done = await _call(agent, only, tools, ctx, decision)
        return [Message("tool", done.content, (), only.id, only.name, done.is_error)]
    results: list[ToolResult | None] = [None] * len(calls)
    limit = asyncio.Semaphore(agent.max_parallel_tools)

    async def one(i: int) -> None:
        decision = decisions[i] if i < len(decisions) else None
        async with limit:
            results[i] = await _call(agent, calls[i], tools, ctx, decision)

    batch: list[int] = []
    for i, call in enumerate(calls):
        tool = tools.get(call.name)
        if tool is not None and tool.sequential:
            await _gather(one, batch)
            batch = []
            await one(i)
        else:
            batch.append(i)
    await _gather(one, batch)
    messages = []
    for call, result in zip(calls, results, strict=True):
        assert result is not None
        messages.append(
            Message.tool(call.id, result.content, name=call.name, is_error=result.is_error)
        )
    return messages


async def _call(
    agent: Agent,
    call: ToolCall,
    tools: dict[str, Tool],
    ctx: RunContext,
    decision: ToolDecision | None,
) -> ToolResult:
    if decision is not None and decision.kind == "deny":
        result = _unrun(
            ctx,
            call,
            f"tool call {call.name!r} was denied by {decision.source or 'a hook'}: "
            f"{decision.reason or 'no reason given'}",
        )
    else:
        result = await _invoke(agent, call, tools, ctx)
    hooks = agent.hooks
    if hooks.after_tool_call:
        result = await hooks.run_after_tool_call(ctx, call, result)
    return result


def _invoke(
    agent: Agent, call: ToolCall, tools: dict[str, Tool], ctx: RunContext
) -> Awaitable[ToolResult]:
    """The call through the invoker's chain, as an executor step; await it at once.

    The chain's own awaitable when steps run inline (no coroutine of this function's); a
    call that ends before its tool runs is its error, ready.
    """
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return _ready(_unrun(ctx, call, f"unknown tool {call.name!r}; the tools are: {known}"))
    try:
        arguments = call.parsed_arguments()
    except json.JSONDecodeError as exc:
        return _ready(
            _unrun(
                ctx,
                call,
                f"arguments for tool {call.name!r} are not valid JSON ({exc.msg} at "
                f"position {exc.pos}): {call.arguments[:200]!r}",
            )
        )
    if not isinstance(arguments, dict):
        return _ready(
            _unrun(
                ctx,
                call,
                f"arguments for tool {call.name!r} must be a JSON object, got "
                f"{type(arguments).__name__}",
            )
        )
    assert ctx.invoker is not None
    invocation = ToolInvocation(call, tool, arguments, ctx)
    if steps_inline(agent):
        return ctx.invoker.call_tool(invocation, agent._run_tool)
    return agent.executor.step(
        f"tool:{call.name}:{call.id}",
        partial(ctx.invoker.call_tool, invocation, agent._run_tool),
        kind="tool",
        idempotent=tool.idempotent or not tool.side_effects,
    )


async def _ready(result: ToolResult) -> ToolResult:
    """``result`` as an awaitable: a call that ended before its tool ran."""
    return result


def _unrun(ctx: RunContext, call: ToolCall, error: str) -> ToolResult:
    """The error result of a call that ends before its tool runs (no ``tool_call`` span).

    Its ``tool_finished`` event is told here, so every call the model made ends in one.
    """
    if ctx.trace.events is not None:
        from ._events import ToolFinished  # built only for a run whose events are streamed

        ctx.trace.events.emit(
            ToolFinished,
            ctx.run_id,
            call_id=call.id,
            name=call.name,
            result=error,
            is_error=True,
            duration=0.0,
        )
    return ToolResult.error(error)


def steps_inline(agent: Agent) -> bool:
    """Whether a step is a plain await: what the in-process executor does without a timeout.

    Then a step needs no name and no callable made for it (a model call and a tool call a
    turn).
    """
    executor = agent.executor
    return type(executor) is InProcessExecutor and executor.step_timeout is None


async def run_tool(agent: Agent, invocation: ToolInvocation) -> ToolResult:
    """The end of the tool-call chain: the tool itself, within its timeout.

    Agent takes it as its method ``_run_tool``: a bound method is equal each time it is read,
    so the invoker builds the chain ending at it once per run, not once per call.
    """
    tool = invocation.tool
    timeout = tool.timeout if tool.timeout is not None else agent.tool_timeout
    try:
        if timeout is None:
            return await tool.invoke(invocation.arguments, invocation.ctx)
        # within(), not asyncio.wait_for: no task and no timer of its own for each call
        return await within(tool.invoke(invocation.arguments, invocation.ctx), timeout)
    except TimeoutError:
        return ToolResult.error(f"tool {tool.name!r} timed out after {timeout} s")
    except BudgetExceeded:  # spent past the run's budget (a child agent's calls): the run's
        raise
    except Exception as exc:  # a tool's failure is the model's to see, not a crash
        return ToolResult.error(f"tool {tool.name!r} raised {type(exc).__name__}: {exc}")


@record(frozen=True, slots=True)
class Suspend:
    """A batch held for a person: the calls waiting, why, and what was decided on each call."""

    pending: tuple[ToolCall, ...]
    reason: str
    verdicts: dict[str, str]


def may_rerun(tool: Tool | None) -> bool:
    """Whether a call of ``tool`` may run again after it was cut short.

    An unknown tool's call may: it does not run at all.
    """
    return tool is None or tool.idempotent or not tool.side_effects


def interrupted_outcome(tool: str) -> str:
    """What the model reads for a call cut short whose tool must not run twice."""
    return (
        f"this call was interrupted (the process running it stopped) and tool {tool!r} is not "
        "idempotent, so it was not run again: whether it acted is unknown. Check its effect "
        "before calling it again"
    )


async def _gather(one: Any, indexes: list[int]) -> None:
    if len(indexes) == 1:
        await one(indexes[0])
    elif indexes:
        await asyncio.gather(*(one(i) for i in indexes))
