"""Tools served in the mcp-server tests (imported as ``sample_tools:TOOLS``)."""

from typing import Any

from agentkit_core import Tool
from agentkit_core import ToolResult


class Add(Tool):
    def __init__(self) -> None:
        super().__init__(
            "add",
            "Add two integers.",
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
            side_effects=False,
        )

    async def invoke(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        total = arguments["a"] + arguments["b"]
        return ToolResult(str(total), structured={"sum": total})


class Explode(Tool):
    def __init__(self) -> None:
        super().__init__("explode", "Always raises.")

    async def invoke(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        raise RuntimeError("boom from the tool")


TOOLS = [Add(), Explode()]
