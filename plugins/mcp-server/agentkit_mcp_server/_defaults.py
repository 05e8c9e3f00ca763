"""Defaults both the light entry module (the CLI's options) and the server read."""

from __future__ import annotations

#: The HTTP port ``serve_tools`` and ``agentkit mcp serve`` listen on by default.
DEFAULT_PORT = 8765
