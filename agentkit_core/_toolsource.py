"""The tool-source seam: a labelled, closable provider of tools (an MCP server, say).

A tool source is what ``agentkit_register_tool_sources`` factories return. It is asked for its
tools every turn, because an external source's listing may change; the kit unions every
source's tools into one namespace (see :class:`~agentkit_core.ToolUnion`), using ``label`` to
name the source in conflicts and logs, and closes the source when the agent is done with it.
"""

from __future__ import annotations

from typing import Protocol
from typing import runtime_checkable

from ._tools import Tool


@runtime_checkable
class ToolSource(Protocol):
    """A closable source of tools, named by a label that is safe to log.

    Attributes:
        label: names the source in conflicts, traces and errors; it must not carry secrets
            (an MCP bridge uses ``mcp:#<n> <program>``, never the arguments or credentials).
    """

    label: str

    async def list_tools(self) -> list[Tool]:
        """The tools offered now; may differ between calls. Failures raise ToolSourceError."""
        ...

    async def aclose(self) -> None:
        """Release what the source holds (processes, connections); calling it twice is a no-op."""
        ...
