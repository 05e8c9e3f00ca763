"""MCP servers added to and removed from a kit at run time, and the kit's close, with real
servers over stdio (tests/mcp_servers/worker.py) and streamable HTTP (the reference
"everything" server)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolSourceError
from agentkit_core import hookimpl
from agentkit_core import tool
from agentkit_core.plugin import ToolConflictError
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "mcp_servers" / "worker.py"
EVERYTHING = ROOT / ".ci" / "cache" / "mcp" / "node_modules" / ".bin" / "mcp-server-everything"
NODE = ROOT / ".ci" / "cache" / "mcp" / "node_modules" / ".bin" / "node"
PROGRAM = os.path.basename(sys.executable)


def worker(*flags: str) -> str:
    return " ".join([sys.executable, str(WORKER), *flags])


def children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True) if p.is_running()}


@pytest.fixture(autouse=True)
def no_server_left() -> Iterator[None]:
    """Every test leaves no server process behind."""
    before = children()
    yield
    deadline = time.monotonic() + 6
    while (left := children() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
        left = {pid for pid in left if psutil.Process(pid).status() != "zombie"}
        if not left:
            break
    assert not (children() - before) or all(
        psutil.Process(pid).status() == "zombie" for pid in children() - before
    ), "a server process was left running"


def offered(model: ScriptedModel) -> list[list[str]]:
    """The tool names each request offered, in order."""
    return [[spec.name for spec in request.tools] for request in model.requests]


@tool
def note(text: str) -> str:
    """Write a note."""
    return f"noted {text}"


# ----------------------------------------------------------------- add_mcp


async def test_a_server_added_during_a_turn_is_offered_from_the_next_turn() -> None:
    added: list[str] = []
    kit: Kit

    @tool
    async def connect() -> str:
        """Connect the worker server."""
        added.append(await kit.add_mcp(worker()))
        return "connected"

    model = ScriptedModel(
        [
            Message.assistant("", [tool_call("connect")]),
            Message.assistant("", [tool_call("echo", '{"text": "hi"}')]),
            "done",
        ]
    )
    kit = await Kit.open(model=model, tools=[note, connect])
    try:
        before = kit.config()  # handed out before the server exists
        result = await Agent.from_config(before, hooks=Hooks()).run("go")
        assert result.output == "done"
        assert added == [f"mcp:#1 {PROGRAM}"]
        turns = offered(model)
        assert turns[0] == ["note", "connect"]  # the turn under way kept its tools
        assert turns[1] == ["note", "connect", "echo", "sleep"]
        assert result.transcript[-2].content == "hi"  # the new server answered
        assert [(o.name, o.source) for o in kit.tools()][-2:] == [
            ("echo", added[0]),
            ("sleep", added[0]),
        ]
    finally:
        await kit.aclose()


async def test_a_clash_closes_the_new_server_and_a_prefix_settles_it() -> None:
    @tool
    def echo(text: str) -> str:
        """A local echo."""
        return text

    async with Kit(model="test", tools=[echo]) as kit:
        before = children()
        with pytest.raises(ToolConflictError, match="'echo' is offered by tools and by mcp:#1"):
            await kit.add_mcp(worker())
        assert children() <= before  # the server is closed again
        assert [o.name for o in kit.tools()] == ["echo"]
        label = await kit.add_mcp(worker(), prefix="w_")
        assert label == f"mcp:#2 {PROGRAM}"  # a refused server connected: its number is spent
        names = [t.name for t in await kit.config().tools.tools()]
        assert names == ["echo", "w_echo", "w_sleep"]


async def test_two_servers_added_at_once_are_dialed_at_once(tmp_path: Path) -> None:
    """Each server answers only once the other has started: dialed one after the other, the
    first would time out."""
    a, b = tmp_path / "a", tmp_path / "b"
    async with await Kit.open(model="test", tool_sources={"mcp": {"connect_timeout": 20}}) as kit:
        labels = await asyncio.gather(
            kit.add_mcp(worker("--touch", str(a), "--wait-for", str(b)), prefix="a_"),
            kit.add_mcp(worker("--touch", str(b), "--wait-for", str(a)), prefix="b_"),
        )
        assert sorted(labels) == [f"mcp:#1 {PROGRAM}", f"mcp:#2 {PROGRAM}"]
        names = sorted(t.name for t in await kit.config().tools.tools())
        assert names == ["a_echo", "a_sleep", "b_echo", "b_sleep"]


async def test_a_close_cancels_a_dial_in_flight_and_its_add_raises() -> None:
    kit = Kit(model="test")
    before = children()
    dial = asyncio.create_task(kit.add_mcp(worker("--start-delay", "30")))
    deadline = time.monotonic() + 20
    while children() == before and time.monotonic() < deadline:  # the server is started
        await asyncio.sleep(0.05)
    started = time.monotonic()
    await kit.aclose()
    with pytest.raises(ToolSourceError, match="was connecting when the kit closed"):
        await dial
    assert time.monotonic() - started < 5
    with pytest.raises(ToolSourceError, match="was about to connect when the kit closed"):
        await kit.add_mcp(worker())


async def test_add_mcp_over_http() -> None:
    port = _free_port()
    server = _everything_http(port)
    try:
        async with Kit(model="test") as kit:
            label = await kit.add_mcp(f"http://127.0.0.1:{port}/mcp", prefix="ev_")
            assert label == f"mcp:#1 http://127.0.0.1:{port}"
            tools = {t.name: t for t in await kit.config().tools.tools()}
            echo = tools["ev_echo"]
            assert "over http" in (await echo.invoke({"message": "over http"}, None)).content
            await kit.remove_mcp(label)
            assert await kit.config().tools.tools() == []
    finally:
        server.kill()
        server.wait()


# ----------------------------------------------------------------- remove_mcp


async def test_removing_a_server_whose_call_is_in_flight() -> None:
    kit = await Kit.open(model="test", tools=[note])
    label = await kit.add_mcp(worker())
    model = ScriptedModel(
        [
            Message.assistant("", [tool_call("sleep", '{"seconds": 60}')]),
            Message.assistant("", [tool_call("note", '{"text": "after"}')]),
            "done",
        ]
    )
    agent = Agent.from_config(kit.config(), model=model, hooks=Hooks())
    ctx = agent.new_context()
    try:
        run = asyncio.create_task(agent.run("go", ctx=ctx))
        while not ctx.trace.find("tool_call"):
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        started = time.monotonic()
        await kit.remove_mcp(label)
        result = await asyncio.wait_for(run, 10)
        assert time.monotonic() - started < 5
        failed = next(m for m in result.transcript if m.role == "tool")
        assert failed.is_error and "was closed while calling tool 'sleep'" in failed.content
        assert offered(model) == [["note", "echo", "sleep"], ["note"], ["note"]]
        assert result.output == "done"
        with pytest.raises(ConfigError, match=rf"no MCP server labelled '{label}'; .* none"):
            await kit.remove_mcp(label)
    finally:
        await kit.aclose()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _everything_http(port: int) -> subprocess.Popen[bytes]:
    """The reference server over streamable HTTP on ``port``, once it listens."""
    if not EVERYTHING.exists():  # a fresh checkout: install the peers the way CI does
        subprocess.run(["bash", str(ROOT / ".ci" / "setup.d" / "30-mcp.sh")], check=True)
    proc = subprocess.Popen(
        [str(NODE), str(EVERYTHING.resolve()), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise TimeoutError(f"the everything server did not listen on {port}")


# ----------------------------------------------------------------- close


async def test_close_ends_calls_in_flight_and_a_config_handed_out_keeps_working() -> None:
    kit = await Kit.open(model="test", tools=[note], mcp=[worker()])
    added = await kit.add_mcp(worker(), prefix="late_")
    config = kit.config()
    union = config.tools
    tools = {t.name: t for t in await union.tools()}
    calls = [
        asyncio.create_task(tools[name].invoke({"seconds": 60}, None))
        for name in ("sleep", "late_sleep")
    ]
    await asyncio.sleep(0.5)
    started = time.monotonic()
    await kit.aclose()
    assert time.monotonic() - started < 5
    for call, label in zip(calls, [f"mcp:#1 {PROGRAM}", added], strict=True):
        with pytest.raises(ToolSourceError, match=f"{label} was closed while calling tool 'sleep'"):
            await call
    # the config still runs, offering what is still open: the kit's own tools
    assert [t.name for t in await union.tools()] == ["note"]
    model = ScriptedModel([Message.assistant("", [tool_call("note", '{"text": "x"}')]), "ok"])
    result = await Agent.from_config(config, model=model, hooks=Hooks()).run("go")
    assert result.output == "ok" and offered(model) == [["note"], ["note"]]
    await kit.aclose()  # twice is fine


class Stubborn:
    """A real MCP server whose close fails, once the server is closed and the other stubborn
    source is closing too (so the two closes must run at once to fail as they should)."""

    closing: dict[str, asyncio.Event] = {}

    def __init__(self, name: str, other: str) -> None:
        from agentkit_mcp_client import MCPToolSource

        self.label, self.other = name, other
        self.inner = MCPToolSource([worker()], prefix=f"{name}_")

    async def list_tools(self) -> list[Any]:
        await self.inner.start()
        return await self.inner.list_tools()

    async def aclose(self) -> None:
        self.closing.setdefault(self.label, asyncio.Event()).set()
        await self.inner.aclose()
        other = self.closing.setdefault(self.other, asyncio.Event())
        try:
            await asyncio.wait_for(other.wait(), 5)
        except TimeoutError:
            raise RuntimeError(f"{self.label} was closed alone") from None
        raise OSError(f"{self.label} would not let go")


class StubbornSources:
    AGENTKIT_NAME = "stubborn-sources"

    @hookimpl
    def agentkit_register_tool_sources(self, register: Any) -> None:
        register("first", lambda: Stubborn("first", "second"))
        register("second", lambda: Stubborn("second", "first"))


async def test_a_close_with_two_servers_failing_raises_both_newest_first() -> None:
    import agentkit_mcp_client

    kit = await Kit.open(
        model="test",
        manager=PluginManager(entry_points=False, plugins=[agentkit_mcp_client, StubbornSources()]),
        mcp=[worker()],
        tool_sources={"first": {}, "second": {}},
    )
    config = kit.config()
    names = sorted(t.name for t in await config.tools.tools())
    assert names == ["echo", "first_echo", "first_sleep", "second_echo", "second_sleep", "sleep"]
    Stubborn.closing.clear()
    with pytest.raises(ExceptionGroup) as caught:
        await kit.aclose()
    assert [str(e) for e in caught.value.exceptions] == [
        "second would not let go",
        "first would not let go",
    ]
    assert caught.value.message == "closing the kit: 2 errors"
    assert await config.tools.tools() == []  # every server left the union; the config still lists
    await kit.aclose()  # a second close does nothing
