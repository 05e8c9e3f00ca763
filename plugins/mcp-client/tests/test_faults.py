"""Faults told apart: a protocol error fails one call and the server stays up; a hung server's
requests end at their deadline; a dead server is gone; closing ends the server's whole group.

The servers are real processes: ``servers/rogue.py`` speaks stdio JSON-RPC by hand and
misbehaves at the protocol level; ``servers/spawner.py`` starts a helper of its own.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid

import psutil
import pytest
from agentkit_mcp_client import DEFAULT_CALL_TIMEOUT
from agentkit_mcp_client import DEFAULT_REQUEST_TIMEOUT
from agentkit_mcp_client import MCPToolSource
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
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


# A reply of the wrong shape, and servers removed while a listing runs -------------------------


@pytest.mark.parametrize(
    ("tool", "problem"),
    [
        ("shapeless", "result: Input should be an object, got 'a string where an object belongs'"),
        ("shapeless_error", "error: Input should be an object, got 'the database is locked'"),
    ],
)
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_reply_that_is_not_an_object_fails_the_call_at_once(
    protocol: str, tool: str, problem: str
) -> None:
    """A JSON-RPC ``result`` or ``error`` that is a string is no message the SDK can route: it
    used to be dropped, and the call waited out its 300 s deadline."""
    async with MCPToolSource([toy("rogue.py")], protocol=protocol) as source:
        tools = await tools_of(source)
        started = time.monotonic()
        with pytest.raises(
            ToolSourceError,
            match=rf"mcp:#1 python: the server's answer to calling tool '{tool}' is malformed: "
            + re.escape(problem),
        ):
            await tools[tool].invoke({}, None)
        assert time.monotonic() - started < 5
        assert (await tools["ok"].invoke({}, None)).content == "ok"  # still connected


async def test_a_listing_answered_with_the_wrong_shape_fails_at_once() -> None:
    async with MCPToolSource([toy("rogue.py") + " shapeless-list"]) as source:
        started = time.monotonic()
        with pytest.raises(
            ToolSourceError,
            match=r"mcp:#1 python: the server's answer to listing tools is malformed: "
            r"result: Input should be an object, got 'a string where an object belongs'",
        ):
            await source.list_tools()
        assert time.monotonic() - started < 5


TOY_TOOLS = ["ask", "die", "echo", "fail", "picture", "sleep"]
ROGUE_TOOLS = ["app_error", "freeze", "hologram", "malformed", "ok", "shapeless", "shapeless_error"]


async def listing_with_removals(servers: list[tuple[str, bool]], removed: set[int]) -> None:
    """List the tools of ``servers`` (command, is it the slow lister) and, once the slow
    server has been asked, remove the servers numbered in ``removed``; the listing must hold
    exactly the tools of the others."""
    asked = asyncio.Event()
    source = MCPToolSource(stderr=lambda chunk: asked.set() if "listing" in chunk else None)
    async with source:
        labels = [
            await source.add(command, prefix=f"s{n}_") for n, (command, _) in enumerate(servers)
        ]
        listing = asyncio.create_task(source.list_tools())
        await asyncio.wait_for(asked.wait(), 10)
        await asyncio.gather(*(source.remove(labels[n]) for n in removed))
        tools = await asyncio.wait_for(listing, 10)
        expected = sorted(
            f"s{n}_{name}"
            for n, (_, slow) in enumerate(servers)
            if n not in removed
            for name in (ROGUE_TOOLS if slow else TOY_TOOLS)
        )
        assert sorted(t.name for t in tools) == expected
        assert source.labels == [label for n, label in enumerate(labels) if n not in removed]


SLOW = f"{toy('rogue.py')} slow-list"


@pytest.mark.parametrize(
    "removed",
    [{0}, {1}, {2}, {0, 1, 2}],
    ids=["listed-before", "being-listed", "listed-after", "all"],
)
async def test_a_server_removed_mid_listing_drops_out_of_that_listing_only(
    removed: set[int],
) -> None:
    await listing_with_removals([(toy(), False), (SLOW, True), (toy(), False)], removed)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    count=st.integers(min_value=1, max_value=3),
)
async def test_removals_mid_listing_never_fail_the_others(data: st.DataObject, count: int) -> None:
    slow_at = data.draw(st.integers(min_value=0, max_value=count - 1), label="slow server")
    removed = data.draw(st.sets(st.integers(min_value=0, max_value=count - 1)), label="removed")
    servers = [(SLOW, True) if n == slow_at else (toy(), False) for n in range(count)]
    await listing_with_removals(servers, removed)
