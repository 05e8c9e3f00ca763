"""Every egress path the web guardrail's allow list covers, end to end through real parts: a
real MCP server over stdio whose read-only tool really fetches, and a real local HTTP server
that records whether the request ever arrived."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path

import agentkit_guardrail_web
import agentkit_mcp_client
import pytest

from agentkit_core import Agent
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginConfig
from agentkit_core import PluginManager
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

SERVER = Path(__file__).resolve().parent / "mcp_servers" / "readonly_fetch.py"


class _Recorder(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        body = b"the secret page"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def target() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server; yields its base URL and the list of paths it was asked for."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    httpd.hits = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", httpd.hits  # type: ignore[attr-defined]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def manager() -> PluginManager:
    return PluginManager(
        entry_points=False,
        plugins=[agentkit_guardrail_web, agentkit_mcp_client],
        config=PluginConfig(),
    )


async def run_fetch(url: str, **guardrail_options: object) -> list[Message]:
    model = ScriptedModel(
        [Message.assistant("", [tool_call("fetch", f'{{"url": "{url}"}}', "c1")]), "done"]
    )
    pm = manager()
    async with await Kit.open(
        model=model,
        mcp=[f"{sys.executable} {SERVER}"],
        guardrail="web",
        guardrail_options=guardrail_options,
        manager=pm,
    ) as kit:
        [fetch] = await kit.config().tools.tools()
        assert fetch.side_effects is False  # the server's readOnlyHint reached the tool
        result = await Agent.from_config(kit.config(), manager=pm).run("fetch it")
    return [m for m in result.transcript if m.role == "tool"]


async def test_an_mcp_read_only_tool_is_stopped_outside_the_allow_list(
    target: tuple[str, list[str]],
) -> None:
    base, hits = target
    [answer] = await run_fetch(
        f"{base}/secret", egress_allow=["example.com"], allow_private_networks=["127.0.0.0/8"]
    )
    assert answer.is_error and "'127.0.0.1' is not in egress_allow" in answer.content
    assert hits == []  # the MCP server never fetched


async def test_the_same_tool_fetches_when_the_allow_list_admits_the_host(
    target: tuple[str, list[str]],
) -> None:
    base, hits = target
    [answer] = await run_fetch(
        f"{base}/page", egress_allow=["127.0.0.1"], allow_private_networks=["127.0.0.0/8"]
    )
    assert not answer.is_error and "the secret page" in answer.content
    assert answer.content.startswith("<<UNTRUSTED id=")  # framed by the same guardrail
    assert hits == ["/page"]
