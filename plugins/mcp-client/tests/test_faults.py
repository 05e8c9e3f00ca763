"""Faults told apart: a protocol error fails one call and the server stays up; a hung server's
requests end at their deadline; a dead server is gone; closing ends the server's whole group.

The servers are real processes: ``servers/rogue.py`` speaks stdio JSON-RPC by hand and
misbehaves at the protocol level; ``servers/spawner.py`` starts a helper of its own.
"""

from __future__ import annotations

import time
import uuid

import psutil
import pytest
from agentkit_mcp_client import DEFAULT_CALL_TIMEOUT
from agentkit_mcp_client import DEFAULT_REQUEST_TIMEOUT
from agentkit_mcp_client import MCPToolSource
from mcp_client_helpers import toy

from agentkit_core import ConfigError
from agentkit_core import ToolSourceError


async def tools_of(source: MCPToolSource) -> dict:
    return {t.name: t for t in await source.list_tools()}


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (
            "app_error",
            r"the server answered calling tool 'app_error' with an error: "
            r"the database is locked \(MCP error -32000\)",
        ),
        ("malformed", r"the server's answer to calling tool 'malformed' is malformed: .*content"),
        ("hologram", r"the server's answer to calling tool 'hologram' is malformed: .*hologram"),
    ],
)
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_protocol_error_fails_the_call_and_the_server_stays_up(
    tool: str, message: str, protocol: str
) -> None:
    async with MCPToolSource([toy("rogue.py")], protocol=protocol) as source:
        tools = await tools_of(source)
        (server,) = source.sources()
        with pytest.raises(ToolSourceError, match=rf"mcp:#1 python: {message}"):
            await tools[tool].invoke({}, None)
        # the same server, the same process, still answering
        assert (await tools["ok"].invoke({}, None)).content == "ok"
        assert sorted(await tools_of(source)) == sorted(tools)
        assert source.sources() == [server]


async def test_after_a_call_times_out_on_a_hung_server_listing_fails_cleanly() -> None:
    source = MCPToolSource([toy("rogue.py")], call_timeout=0.5, request_timeout=1)
    async with source:
        tools = await tools_of(source)
        started = time.monotonic()
        with pytest.raises(
            ToolSourceError, match=r"no answer while calling tool 'freeze' within 0\.5 s"
        ):
            await tools["freeze"].invoke({}, None)
        for _ in range(2):  # the next turns: each listing ends at its deadline, never hangs
            with pytest.raises(ToolSourceError, match=r"no answer while listing tools within 1 s"):
                await source.list_tools()
        assert time.monotonic() - started < 8
    # closing stops the hung server (the no_children_left fixture checks it)


async def test_after_a_call_times_out_on_a_busy_server_listing_works() -> None:
    async with MCPToolSource([toy()], call_timeout=0.5) as source:
        tools = await tools_of(source)
        with pytest.raises(ToolSourceError, match=r"no answer while calling tool 'sleep'"):
            await tools["sleep"].invoke({"seconds": 30}, None)
        assert "echo" in await tools_of(source)
        assert (await tools["echo"].invoke({"text": "still here"}, None)).content == "still here"


def test_every_request_has_a_deadline_by_default() -> None:
    source = MCPToolSource([toy()])
    assert (source.request_timeout, source.call_timeout) == (DEFAULT_REQUEST_TIMEOUT, None)
    assert (DEFAULT_REQUEST_TIMEOUT, DEFAULT_CALL_TIMEOUT) == (60.0, 300.0)
    for bad in (0, -1, float("nan"), "10", None):
        with pytest.raises(ConfigError, match="request_timeout"):
            MCPToolSource([toy()], request_timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="call_timeout"):
        MCPToolSource([toy()], call_timeout=0)


async def test_a_dead_server_is_still_told_from_a_protocol_error() -> None:
    async with MCPToolSource([toy()]) as source:
        tools = await tools_of(source)
        with pytest.raises(ToolSourceError, match=r"(?s)died while calling tool 'die'.*on purpose"):
            await tools["die"].invoke({}, None)
        with pytest.raises(ToolSourceError, match="the server is gone"):
            await source.list_tools()


def helpers(marker: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmdline = p.info["cmdline"] or []
        if marker in cmdline and "-c" in cmdline and p.status() != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


@pytest.mark.parametrize("how", ["aclose", "remove"])
async def test_closing_ends_the_server_s_whole_process_group(how: str) -> None:
    marker = f"agentkit-helper-{uuid.uuid4().hex}"
    source = await MCPToolSource([f"{toy('spawner.py')} {marker}"]).start()
    try:
        assert [t.name for t in await source.list_tools()] == ["noop"]
        assert len(helpers(marker)) == 1
    finally:
        if how == "aclose":
            await source.aclose()
        else:
            await source.remove(source.labels[0])
            await source.aclose()
    deadline = time.monotonic() + 5
    while helpers(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert helpers(marker) == []
