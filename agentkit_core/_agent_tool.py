"""A child agent offered as a tool: the parent's model hands it a task, it returns its answer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ._context import RunContext
from ._context import unread
from ._messages import JSONObject
from ._run_errors import BudgetExceeded
from ._tools import Tool
from ._tools import ToolResult

if TYPE_CHECKING:
    from ._agent import Agent


class AgentTool(Tool):
    """Runs ``agent`` on the ``task`` argument; its answer is the result, its usage the caller's.

    The child runs in a run of its own (its own transcript), bound to the calling run
    (``agent.new_context(parent=ctx)``): its spans nest under the call's, each call it makes
    counts against the caller's budget as it is made (so a child cannot spend past it), its
    checkpoints go to the caller's checkpointer in a namespace of its own, it asks through the
    caller's elicitor, and secret taint flows both ways. Its own budget only narrows that:
    running out of it is the call's error, which the parent's model sees; so is a run that ends
    without an answer (held for a person's approval, or stopped by a guard or a hook). When the
    calling run records a session, the child's run is recorded in a session of its own, linked
    to it.

    Nesting is limited by ``Budget.max_depth`` (5 levels below a run by default) of every run
    above the child: a child past one fails that run with :class:`BudgetExceeded` naming the
    chain of agents, so an agent that reaches itself again stops. The child's whole run is one
    tool call of its caller: ``timeout`` bounds it, grandchildren included (None: the calling
    agent's ``tool_timeout``, 300 s by default).
    """

    def __init__(
        self,
        agent: Agent,
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
    ):
        super().__init__(
            name or agent.name,
            description
            or getattr(agent, "description", "")
            or f"Hand a task to the {agent.name} agent and get its answer.",
            {
                "type": "object",
                "properties": {"task": {"type": "string", "description": "what to do"}},
                "required": ["task"],
                "additionalProperties": False,
            },
            timeout=timeout,
        )
        self.agent = agent

    async def invoke(self, arguments: JSONObject, ctx: RunContext) -> ToolResult:
        task = arguments.get("task")
        if not isinstance(task, str) or not task:
            return ToolResult.error(f"{self.name}: 'task' must be a non-empty string")
        name = self.agent.name
        child = unread(self.agent.new_context(parent=ctx))
        child.recorder = await ctx.recorder.child(
            ctx, name, model=self.agent.model.name, default=child.recorder
        )
        try:
            result = await self.agent.run(task, ctx=child)
        except BudgetExceeded as exc:
            if exc.run_id != child.run_id:
                raise  # a parent's budget: that run fails
            return ToolResult.error(f"{name} ran out of its own budget: {exc}")
        if result.status == "suspended":
            held = ", ".join(f"{c.name!r} ({c.id})" for c in result.pending)
            return ToolResult.error(
                f"{name} did not answer: its run {result.run_id!r} holds {held} for a person's "
                f"approval ({result.stop_reason}), which a call of it as a tool cannot give; "
                "nothing it holds ran"
            )
        if result.status == "stopped":
            return ToolResult.error(f"{name} stopped before answering: {result.stop_reason}")
        output = result.output
        if isinstance(output, str):
            return ToolResult(output)
        from pydantic_core import to_jsonable_python

        data = to_jsonable_python(output)
        return ToolResult(json.dumps(data, ensure_ascii=False), structured=data)


def agent_tool(
    agent: Agent,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Tool:
    """A child agent as a tool named after it (or ``name``); see :class:`AgentTool`."""
    return AgentTool(agent, name=name, description=description, timeout=timeout)
