"""Handoffs: a run goes on under another agent's config, over one transcript and one session.

A kit given ``handoffs=[other, ...]`` offers the model one :class:`HandoffTool` per target
(``transfer_to_<name>``). When the model takes one, the loop replaces the run's agent with one
built from the target's config (instructions, tools, model, hooks, policy, guards) and keeps
what belongs to the run: its context and recorder (so its session), its checkpointer, executor,
budget and deadlines. The transcript's leading system messages become the target's; the rest
stays, the call's result saying the handoff happened, so every provider reads a valid
transcript. ``RunState.agent`` names the agent in charge, so a resumed run goes on under it;
the session records a ``handoff`` item naming both agents, and the run's events a
:class:`~agentkit_core.events.Handoff`.

A grant belongs to the conversation, not to an engine: what the run's grant scope holds in
the engine handing over is granted again in the target's engine (which compiles it under its
own rules, so a deny there stays a deny).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

from ._context import Invoker
from ._context import RunContext
from ._errors import ConfigError
from ._messages import JSONObject
from ._messages import Message
from ._messages import ToolCall
from ._requests import WorkingContext
from ._tools import Tool
from ._tools import ToolResult
from ._tools import union_of

if TYPE_CHECKING:
    from ._agent import Agent
    from ._kit import AgentConfig
    from ._run_state import RunState

#: The label of the handoff tools' source in a kit's tool union.
HANDOFFS = "handoff"

#: What a tool name cannot hold (compiled by ``re``'s cache when a handoff is first made).
_UNSAFE = r"[^A-Za-z0-9_-]+"


class HandoffTarget(Protocol):
    """What a handoff goes to: a :class:`~agentkit_core.Kit`, whose config it runs under."""

    def config(self) -> AgentConfig: ...


class HandoffTool(Tool):
    """The tool that hands the conversation to ``target``'s agent; its result says so."""

    def __init__(self, target: HandoffTarget) -> None:
        config = target.config()
        self.target = target
        #: The name of the agent the handoff goes to.
        self.agent = config.name
        safe = re.sub(_UNSAFE, "_", config.name).strip("_") or "agent"
        about = config.description or f"the agent {config.name!r}"
        super().__init__(
            f"transfer_to_{safe}"[:64],
            f"Hand the conversation over to the agent {config.name!r} ({about}); it answers "
            "the user from here, with its own instructions and tools.",
            side_effects=False,
            idempotent=True,
        )

    async def invoke(self, arguments: JSONObject, ctx: RunContext) -> ToolResult:
        return ToolResult(f"Handed the conversation to the agent {self.agent!r}.")


def handoff_tools(targets: Sequence[HandoffTarget], own: str) -> list[HandoffTool]:
    """One tool per target; two targets whose tools would share a name are a ConfigError."""
    tools: list[HandoffTool] = []
    for target in targets:
        made = HandoffTool(target)
        if made.agent == own:
            raise ConfigError(
                f"kit {own!r} hands off to an agent of its own name; give each agent of a "
                "handoff its own name (a run names the agent in charge by it)",
                value=target,
                source="Kit(handoffs=)",
            )
        for other in tools:
            if other.name == made.name:
                raise ConfigError(
                    f"two handoff targets of kit {own!r}, agents {other.agent!r} and "
                    f"{made.agent!r}, would both be offered as {made.name!r}; give them "
                    "distinct names",
                    value=target,
                    source="Kit(handoffs=)",
                )
        tools.append(made)
    return tools


def offers_handoff(tools: dict[str, Tool]) -> bool:
    """Whether any of ``tools`` is a handoff: only then can a batch take one."""
    return any(isinstance(tool, HandoffTool) for tool in tools.values())


def taken_handoff(
    calls: Sequence[ToolCall], tools: dict[str, Tool], outcome: Sequence[Message]
) -> tuple[ToolCall, HandoffTool] | None:
    """The handoff the batch took, with its call: the first handoff call that ran cleanly.

    A refused call (the policy's deny, a person's no) is an error result: no handoff.
    """
    failed: set[str | None] | None = None  # read only for a batch with a handoff call
    for call in calls:
        found = tools.get(call.name)
        if isinstance(found, HandoffTool):
            if failed is None:
                failed = {m.tool_call_id for m in outcome if m.role == "tool" and m.is_error}
            if call.id not in failed:
                return call, found
    return None


async def hand_off(
    agent: Agent, taken: tuple[ToolCall, HandoffTool], ctx: RunContext, state: RunState
) -> Agent:
    """Switch the run from ``agent`` to ``handoff``'s target; the agent the run goes on with.

    The switch is recorded (a ``handoff`` item, a :class:`Handoff` event) before the loop
    checkpoints the run under the target.
    """
    call, handoff = taken
    target = agent_for(agent, handoff.target)
    await _switch(agent, target, ctx)
    prefix = await target.request_builder.build(state.task, WorkingContext(), ctx)
    head = _system_head(state.transcript)  # a new list: earlier requests are views of the old
    state.transcript = [*prefix.messages[: _system_head(prefix.messages)], *state.transcript[head:]]
    state.agent = target.name
    body = {"from": agent.name, "to": target.name, "call": call.id}
    ctx.recorder.record(ctx, "handoff", body)
    if (events := ctx.trace.events) is not None:
        from ._events import Handoff  # built only for a run whose events are streamed

        events.emit(
            Handoff,
            ctx.run_id,
            ctx.recorder.last_id,
            from_agent=agent.name,
            to_agent=target.name,
            call_id=call.id,
        )
    return target


async def resumed_agent(agent: Agent, name: str, ctx: RunContext, run_id: str) -> Agent:
    """The agent a resumed run was handed to, found by ``name`` among ``agent``'s handoffs.

    The search follows each target's own handoffs in turn; ``ctx`` is switched to it.
    """
    seen: dict[str, HandoffTarget] = {}
    frontier: list[Any] = [agent._union if agent._union is not None else agent._tools]
    while frontier:
        for tool in await _tools_of(frontier.pop(0)):
            if isinstance(tool, HandoffTool) and tool.agent not in seen:
                seen[tool.agent] = tool.target
                if tool.agent == name:
                    target = agent_for(agent, tool.target)
                    await _switch(agent, target, ctx)
                    return target
                frontier.append(tool.target.config().tools)
    reach = ", ".join(repr(n) for n in seen) or "none"
    raise ConfigError(
        f"cannot resume run {run_id!r}: it was handed to the agent {name!r}, which agent "
        f"{agent.name!r} does not reach through its handoffs (it reaches: {reach}); resume "
        "it with the kit the run started under, built with the same handoffs=",
        value=name,
        source="Agent.resume",
    )


def agent_for(agent: Agent, target: HandoffTarget) -> Agent:
    """An agent of ``target``'s config carrying what belongs to ``agent``'s run."""
    carried: dict[str, Any] = {
        "checkpointer": agent.checkpointer,
        "executor": agent.executor,
        "elicitor": agent.elicitor,
        "budget": agent.budget,
        "model_deadline": agent.model_deadline,
        "tool_timeout": agent.tool_timeout,
        "output": agent.output,
        "output_retries": agent.output_retries,
        "recorder": agent.recorder,
    }
    if agent._exporters is not None:
        carried["exporters"] = agent._exporters
    return type(agent).from_config(target.config(), **carried)


async def _switch(source: Agent, target: Agent, ctx: RunContext) -> None:
    """Put ``ctx`` under ``target``: its model, middlewares, policy, guardrail and guards."""
    old, new = source.policy, target.policy
    if new is not None and new is not old:
        from ._policy import grant_scope  # a policy engine is configured: its module is loaded

        scope = grant_scope(ctx)
        for grant, _, ended in () if old is None else old.grants(scope):
            if not ended:
                new.grant(grant, ctx)
        new.end_grants(scope, ctx.run_id, ctx)  # as at the task's start: earlier runs' end
    ctx.agent_name = target.name
    ctx.policy, ctx.guardrail, ctx.guards = target.policy, target.guardrail, target.guards
    ctx.invoker = Invoker(target.model, target.middlewares, ctx=ctx, deadline=target.model_deadline)


async def _tools_of(tools: Any) -> Sequence[Tool]:
    union = union_of(tools)
    if union is not None:
        return await union.tools()
    return list(tools.values()) if isinstance(tools, dict) else list(tools)


def _system_head(messages: Sequence[Message]) -> int:
    """How many messages lead ``messages`` as system messages: the instructions."""
    count = 0
    for message in messages:
        if message.role != "system":
            break
        count += 1
    return count
