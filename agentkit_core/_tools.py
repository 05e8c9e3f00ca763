"""Tools: the base class every tool is, and the result a tool call produces."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from ._models import ToolSpec

if TYPE_CHECKING:
    from ._context import RunContext


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call produced.

    ``content`` is what the model reads (text, or OpenAI-style content parts such as images);
    ``structured`` keeps machine-readable output beside it; ``is_error`` marks a failure the
    model should see and may recover from.
    """

    content: str | tuple[dict[str, Any], ...]
    is_error: bool = False
    structured: Any = None

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(message, is_error=True)


class Tool:
    """A tool an agent may call.

    Subclasses implement :meth:`invoke`. The agent validates nothing on a subclass's behalf:
    ``invoke`` receives the decoded JSON arguments and must check them itself (the function
    tools built by :func:`~agentkit_core.tool` validate against their signature).

    Attributes:
        name: unique within an agent; what the model calls.
        description: what the model reads to decide when to call it.
        parameters: the JSON Schema of the arguments object.
        sequential: True when the tool must not run alongside others in one batch.
        side_effects: True when calling it acts on the world (egress checks these).
        timeout: seconds a call may take before it becomes a tool error; None for no limit.
    """

    name: str
    description: str = ""
    parameters: dict[str, Any]
    sequential: bool = False
    side_effects: bool = True
    timeout: float | None = None

    def __init__(
        self,
        name: str,
        description: str = "",
        parameters: dict[str, Any] | None = None,
        *,
        sequential: bool = False,
        side_effects: bool = True,
        timeout: float | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters or {"type": "object", "properties": {}}
        self.sequential = sequential
        self.side_effects = side_effects
        self.timeout = timeout

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model is told about it."""
        return ToolSpec(self.name, self.description, self.parameters)

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext) -> ToolResult:
        """Run the tool with decoded arguments; return a result (errors as ``is_error``)."""
        raise NotImplementedError(f"{type(self).__name__}.invoke")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
