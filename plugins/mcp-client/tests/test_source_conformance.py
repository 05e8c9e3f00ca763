"""The MCP bridge and one server of it pass the ToolSource conformance suite, on real servers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from agentkit_mcp_client import MCPToolSource
from mcp_client_helpers import SERVERS
from mcp_client_helpers import toy

from agentkit_core.plugin import ToolSource
from agentkit_core.testing import ToolSourceConformance

SECRET = "--api-key=hunter2"


class TestMCPServerSourceConformance(ToolSourceConformance):
    """One server of the bridge, the part the kit unions: the python toy server over stdio."""

    label_must_not_show = ("hunter2", "--api-key", str(SERVERS))

    @pytest.fixture
    async def source(self) -> AsyncIterator[ToolSource]:
        async with MCPToolSource([f"{toy()} {SECRET}"]) as bridge:
            (server,) = bridge.sources()
            yield server

    def sample_call(self):
        return "echo", {"text": "hi"}, lambda result: result.content == "hi"

    def failing_call(self):
        return "fail", {}


class TestMCPToolSourceConformance(ToolSourceConformance):
    """The registered ``mcp`` factory over server-everything (Node, stdio)."""

    label_must_not_show = ("stdio", "everything")

    @pytest.fixture
    async def source(self, peers) -> AsyncIterator[ToolSource]:
        async with MCPToolSource([peers.everything()]) as bridge:
            yield bridge

    def sample_call(self):
        return "echo", {"message": "hi"}, lambda result: result.content == "Echo: hi"

    def failing_call(self):
        return "echo", {"message": 5}  # the server checks its input schema: a tool error
