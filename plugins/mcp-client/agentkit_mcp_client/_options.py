"""``MCPToolSourceOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import TypedDict

if TYPE_CHECKING:
    from pathlib import Path  # the options' hint: resolved when the settings are read

    from agentkit_core.plugin import Elicitor

    from ._connection import ServerSpec
    from ._connection import StderrSink
    from ._source import ToolFilter


class MCPToolSourceOptions(TypedDict, total=False):
    """The options of ``mcp`` (``Kit(tool_sources={"mcp": {...}})``), checked at lookup.

    See :class:`MCPToolSource`; ``Kit(mcp=[...])`` adds to ``servers``.
    """

    #: Command lines, ``http(s)://`` URLs, :class:`ServerParams` or mappings of them.
    servers: Iterable[ServerSpec | Mapping[str, Any]]
    #: Seconds to connect to a server (default 30).
    connect_timeout: float
    #: Seconds a tool call may take; None leaves the agent's ``tool_timeout`` in charge.
    call_timeout: float | None
    #: Seconds any other request may take (default 60).
    request_timeout: float
    #: Answers the servers' elicitation requests (code only).
    elicitor: Elicitor | None
    #: Where the servers' stderr goes: a function or a file (code only).
    stderr: StderrSink
    #: The tools kept: names, or a function of the name (code only).
    tool_filter: ToolFilter
    #: Put before every tool name.
    prefix: str
    #: ``"auto"`` (the default) or ``"legacy"``: the SDK's protocol mode.
    protocol: str
    #: Whether the servers may ask the run's model (``sampling/createMessage``); default True.
    sampling: bool
    #: The workspace directories announced to the servers as roots (one or several).
    roots: str | Path | Sequence[str | Path] | None
    #: Whether each server's resources are offered as two tools (list, read); default False.
    resource_tools: bool
