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


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "page", "version": "1"},
    },
}


@pytest.mark.parametrize(
    ("origin", "host", "refused"),
    [
        # a page served by another program on this machine is another site
        ("http://127.0.0.1:{other}", "127.0.0.1:{port}", True),
        ("http://localhost:{other}", "127.0.0.1:{port}", True),
        ("null", "127.0.0.1:{port}", True),
        ("https://evil.example", "127.0.0.1:{port}", True),
        # a page that rebound its own name to 127.0.0.1
        (None, "evil.example:{port}", True),
        # a program sends no Origin; the server's own origin is itself
        (None, "127.0.0.1:{port}", False),
        ("http://127.0.0.1:{port}", "127.0.0.1:{port}", False),
    ],
)
async def test_a_web_page_elsewhere_cannot_drive_the_http_server(origin, host, refused):
    import httpx

    port, other = free_port(), free_port()
    server = asyncio.create_task(
        serve_tools(load_tools("sample_tools:TOOLS"), transport="http", port=port)
    )
    try:
        await wait_listening(port, server)
        headers = {
            "Host": host.format(port=port),
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        if origin is not None:
            headers["Origin"] = origin.format(port=port, other=other)
        async with httpx.AsyncClient() as client:
            answer = await client.post(
                f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=headers
            )
        if refused:
            assert answer.status_code == 403, (answer.status_code, answer.text)
            assert "refused" in answer.json()["error"]
        else:
            assert answer.status_code == 200, (answer.status_code, answer.text)
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
