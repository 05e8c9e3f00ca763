"""A resource part follows its server's changes: against ``servers/changing.py`` (the python
SDK's MCPServer) over stdio and HTTP, in both protocol eras."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from agentkit_mcp_client import MCPToolSource
from mcp_client_helpers import SERVERS
from mcp_client_helpers import free_port
from mcp_client_helpers import toy
from mcp_client_helpers import wait_port

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import LiveInstructions
from agentkit_core import Message
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call


@pytest.fixture(params=["stdio", "http"])
def changing(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "stdio":
        yield f"{toy('changing.py')} stdio"
        return
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "changing.py"), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_port(port)
    yield f"http://127.0.0.1:{port}/mcp"
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(10)


def _call(name: str, uri: str, text: str) -> Message:
    return Message.assistant("", [tool_call(name, json.dumps({"uri": uri, "text": text}))])


async def _run(source: MCPToolSource, part, script: list[Message]) -> list[str]:
    """Run an agent over the part; what each model request's system message said."""
    seen: list[str] = []

    def answer(reply):
        def respond(request):
            seen.append(request.messages[0].text)
            return reply

        return respond

    heard: list[str | None] = []
    part.server.connection.features.listeners.append(heard.append)

    calls: list[str] = []

    async def after_tool_call(ctx, call, result):
        # A notification is not ordered with the tool's result (over HTTP it comes on the
        # listen stream): wait until this call's came, then the next request must carry it.
        calls.append(call.name)
        deadline = time.monotonic() + 10
        while len(heard) < len(calls) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return result

    live = LiveInstructions([part], budget=None)
    hooks = Hooks.of("instructions", before_model_call=live.before_model_call)
    agent = Agent(
        model=ScriptedModel([answer(m) for m in script]),
        prompt=live.text,
        tools=await source.list_tools(),
        hooks=hooks.merged(Hooks.of("wait", after_tool_call=after_tool_call)),
    )
    await agent.run("go")
    return seen


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_an_update_reaches_the_next_request_within_the_budget(changing, protocol):
    async with MCPToolSource([changing], protocol=protocol) as source:
        (label,) = source.labels
        part = await source.resource_part(label, ["note://a", "note://b"], max_bytes=60)
        seen = await _run(
            source,
            part,
            [
                _call("set_note", "note://a", "second a"),
                _call("set_note", "note://b", "x" * 50),
                Message.assistant("done"),
            ],
        )
    assert seen[0] == "## note://a\nfirst a\n\n## note://b\nfirst b"
    assert seen[1] == "## note://a\nsecond a\n\n## note://b\nfirst b"  # the very next request
    assert seen[2] == "## note://a\nsecond a"  # b grew past the budget: left out whole
    assert [o.what for o in part.render(None).omissions] == ["note://b"]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_list_change_refreshes_the_list_and_the_part(changing, protocol):
    async with MCPToolSource([changing], protocol=protocol, resource_tools=True) as source:
        (label,) = source.labels
        part = await source.resource_part(label, ["note://a"])
        before = part.refreshes
        seen = await _run(
            source,
            part,
            [_call("add_note", "note://c", "third c"), Message.assistant("done")],
        )
        tools = {t.name: t for t in await source.list_tools()}
        listing = await tools["changing_list_resources"].invoke({}, None)
    assert "note://c" in listing.content
    assert len(seen) == 2 and part.refreshes > before  # the list change re-read the part
