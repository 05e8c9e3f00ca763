"""serve_tools() in-process over HTTP: served to our bridge, then stopped cleanly by a cancel."""

from __future__ import annotations

import asyncio
import socket

import pytest
from agentkit_mcp_client import MCPToolSource
from agentkit_mcp_server import load_tools
from agentkit_mcp_server import serve_tools
from mcp_server_helpers import free_port
from mcp_server_helpers import wait_listening

from agentkit_core import ConfigError


async def test_cancelling_an_http_server_closes_its_port_with_a_client_connected():
    port = free_port()
    server = asyncio.create_task(
        serve_tools(load_tools("sample_tools:TOOLS"), transport="http", port=port)
    )
    await wait_listening(port, server)
    async with MCPToolSource([f"http://127.0.0.1:{port}/mcp"]) as source:
        add = next(t for t in await source.list_tools() if t.name == "add")
        assert (await add.invoke({"a": 20, "b": 22}, None)).content == "42"
        server.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(server, 10)
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, "the port is still open"
    # no "unclosed socket" ResourceWarning: filterwarnings=error would fail this test


async def test_an_unknown_transport():
    with pytest.raises(ConfigError, match="transport must be 'stdio' or 'http', got 'sse'"):
        await serve_tools(load_tools("sample_tools:TOOLS"), transport="sse")  # type: ignore[arg-type]
