"""A child agent offered as a tool: the parent's model hands it a task, it returns its answer."""

from __future__ import annotations

import json
from typing import Any

from ._context import RunContext
from ._tools import Tool
from ._tools import ToolResult


class AgentTool(Tool):
    """Runs ``agent`` on the ``task`` argument; its answer is the result, its usage the caller's.

    The child runs in a run of its own (its own transcript and trace) whose parent is the
    calling run: the usage it spent is added to the caller, so a budget covers the whole tree,
    and secret taint flows both ways (a child that elicits a secret taints its caller; a
    tainted caller's children start tainted). When the calling run records a session, the
    child's run is recorded in a session of its own, linked to it.
    """

    def __init__(self, agent: Any, *, name: str | None = None, description: str | None = None):
        super().__init__(
            name or agent.name,
            description or f"Hand a task to the {agent.name} agent and get its answer.",
            {
                "type": "object",
                "properties": {"task": {"type": "string", "description": "what to do"}},
                "required": ["task"],
                "additionalProperties": False,
            },
        )
        self.agent = agent

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext) -> ToolResult:
        task = arguments.get("task")
        if not isinstance(task, str) or not task:
            return ToolResult.error(f"{self.name}: 'task' must be a non-empty string")
        child = self.agent.new_context(parent=ctx)
        child.recorder = await ctx.recorder.child(
            ctx, self.agent.name, model=self.agent.model.name, default=child.recorder
        )
        result = await self.agent.run(task, ctx=child)
        ctx.add_usage(result.usage)
        output = result.output
        if isinstance(output, str):
            return ToolResult(output)
        from pydantic_core import to_jsonable_python

        data = to_jsonable_python(output)
        return ToolResult(json.dumps(data, ensure_ascii=False), structured=data)


def agent_tool(agent: Any, *, name: str | None = None, description: str | None = None) -> Tool:
    """A child agent as a tool named after it (or ``name``)."""
    return AgentTool(agent, name=name, description=description)
