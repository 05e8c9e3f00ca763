"""The client bridge against real servers: the npm reference servers, mcp-server-time, and
small python servers in ``servers/`` that misbehave on purpose."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
import time

import psutil
import pytest
from agentkit_mcp_client import MCPToolSource
from agentkit_mcp_client import ServerParams
from mcp_client_helpers import free_port
from mcp_client_helpers import toy
from mcp_client_helpers import wait_port

from agentkit_core import ToolSourceError
from agentkit_core.plugin import ToolConflictError


async def tool_named(source, name):
    return next(t for t in await source.list_tools() if t.name == name)


async def test_everything_server_tools_and_results(peers):
    async with MCPToolSource([peers.everything()]) as source:
        (label,) = source.labels
        assert label == "mcp:#1 node"
        tools = {t.name: t for t in await source.list_tools()}
        assert {"echo", "get-sum", "get-tiny-image"} <= set(tools)
        assert tools["echo"].parameters["properties"]["message"]["type"] == "string"
        echoed = await tools["echo"].invoke({"message": "hi there"}, None)
        assert "hi there" in echoed.content and not echoed.is_error
        image = await tools["get-tiny-image"].invoke({}, None)
        kinds = [part["type"] for part in image.content]
        assert "image_url" in kinds and "text" in kinds
        url = next(p for p in image.content if p["type"] == "image_url")["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")


async def test_filesystem_server_reads_a_file(peers, tmp_path):
    (tmp_path / "note.txt").write_text("filesystem says hello")
    async with MCPToolSource([peers.filesystem(str(tmp_path))]) as source:
        read = await tool_named(source, "read_text_file")
        result = await read.invoke({"path": str(tmp_path / "note.txt")}, None)
        assert "filesystem says hello" in result.content
        denied = await read.invoke({"path": "/etc/passwd"}, None)
        assert denied.is_error
        assert "denied" in str(denied.content).lower()


async def test_time_server_by_params(peers):
    params = ServerParams(peers.time_server, ("--local-timezone", "UTC"))
    async with MCPToolSource([params]) as source:
        assert source.labels == ["mcp:#1 mcp-server-time"]
        now = await tool_named(source, "get_current_time")
        result = await now.invoke({"timezone": "UTC"}, None)
        assert not result.is_error
        assert json.loads(result.content)["timezone"] == "UTC"


async def test_results_keep_structure_images_and_errors():
    async with MCPToolSource([toy()]) as source:
        tools = {t.name: t for t in await source.list_tools()}
        echoed = await tools["echo"].invoke({"text": "x"}, None)
        assert (echoed.content, echoed.structured, echoed.is_error) == ("x", {"echoed": "x"}, False)
        failed = await tools["fail"].invoke({}, None)
        assert failed.is_error and failed.content == "this tool always fails"
        picture = await tools["picture"].invoke({}, None)
        assert picture.content[0] == {"type": "text", "text": "a pixel"}
        assert picture.content[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")


def test_labels_never_show_arguments_or_credentials():
    from agentkit_mcp_client._connection import describe
    from agentkit_mcp_client._connection import parse_spec

    assert describe(parse_spec("/opt/bin/server --token s3cret")) == "server"
    assert describe(parse_spec("https://user:pw@example.com:8443/mcp?key=k")) == (
        "https://example.com:8443"
    )


async def test_a_server_that_exits_at_start_reports_its_stderr_tail():
    source = MCPToolSource([toy("exit_at_start.py")], connect_timeout=10)
    with pytest.raises(ToolSourceError, match=r"(?s)failed to start.*TOY_TOKEN is not set"):
        await source.start()


async def test_a_program_that_does_not_exist():
    with pytest.raises(ToolSourceError, match="could not start 'no-such-mcp-server'"):
        await MCPToolSource(["no-such-mcp-server --flag"]).start()


async def test_a_server_that_never_answers_times_out():
    started = time.monotonic()
    source = MCPToolSource([toy("silent.py")], connect_timeout=1)
    with pytest.raises(ToolSourceError, match=r"(?s)did not answer within 1s.*never answer"):
        await source.start()
    assert time.monotonic() - started < 6


async def test_a_stubborn_server_and_its_child_are_killed():
    lines: list[str] = []
    source = MCPToolSource([toy("stubborn.py")], connect_timeout=0.5, stderr=lines.append)
    with pytest.raises(ToolSourceError, match=r"did not answer within 0\.5s"):
        await source.start()
    assert "stubborn server up" in "".join(lines)
    stray = [
        p
        for p in psutil.process_iter(["cmdline"])
        if "signal.SIG_IGN); time.sleep(600)" in " ".join(p.info["cmdline"] or [])
    ]
    assert not [p for p in stray if p.status() != psutil.STATUS_ZOMBIE]


async def test_a_server_killed_mid_call():
    async with MCPToolSource([toy()]) as source:
        die = await tool_named(source, "die")
        with pytest.raises(ToolSourceError, match=r"(?s)died while calling tool 'die'.*on purpose"):
            await die.invoke({}, None)
        with pytest.raises(ToolSourceError, match="the server is gone"):
            await source.list_tools()


async def test_a_construction_that_fails_closes_the_servers_already_connected():
    source = MCPToolSource([toy(), toy("exit_at_start.py")])
    with pytest.raises(ToolSourceError, match="TOY_TOKEN"):
        await source.start()
    assert source.labels == []
    # the no_children_left fixture checks the first server's process is gone


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
async def test_add_and_remove_in_any_order(order):
    async with MCPToolSource() as source:
        labels = [await source.add(toy(), prefix=f"s{i}_", tool_filter=["echo"]) for i in range(3)]
        assert labels == [f"mcp:#{i + 1} {os.path.basename(sys.executable)}" for i in range(3)]
        alive = set(range(3))
        for i in order:
            await source.remove(labels[i])
            alive.discard(i)
            names = sorted(t.name for t in await source.list_tools())
            assert names == [f"s{j}_echo" for j in sorted(alive)]
            for j in alive:
                echo = await tool_named(source, f"s{j}_echo")
                assert (await echo.invoke({"text": str(j)}, None)).content == str(j)
        late = await source.add(toy(), tool_filter=lambda name: name == "echo")
        assert late == "mcp:#4 " + os.path.basename(sys.executable)
        assert [t.name for t in await source.list_tools()] == ["echo"]


async def test_removing_an_unknown_label():
    async with MCPToolSource() as source:
        with pytest.raises(ValueError, match=r"no MCP server labelled 'mcp:#9 x'"):
            await source.remove("mcp:#9 x")


async def test_close_ends_calls_in_flight_quickly():
    source = await MCPToolSource([toy(), toy()], prefix="").start()
    first, second = source.sources()
    calls = [
        asyncio.create_task((await tool_named(s, "sleep")).invoke({"seconds": 60}, None))
        for s in (first, second)
    ]
    await asyncio.sleep(0.3)
    started = time.monotonic()
    await source.aclose()
    for call in calls:
        with pytest.raises(
            ToolSourceError, match=r"mcp:#\d .* was closed while calling tool 'sleep'"
        ):
            await call
    assert time.monotonic() - started < 5
    with pytest.raises(ToolSourceError, match="is closed"):
        await source.add(toy())


async def test_name_collisions_name_both_sources():
    async with MCPToolSource([toy(), toy()]) as source:
        with pytest.raises(
            ToolConflictError, match=r"'echo' is offered by mcp:#1 .* and by mcp:#2"
        ):
            await source.list_tools()


async def test_stderr_goes_to_the_sink():
    chunks: list[str] = []
    async with MCPToolSource([toy()], stderr=chunks.append) as source:
        await source.list_tools()
    assert "toy server up" in "".join(chunks)


@pytest.mark.parametrize(("protocol", "era"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_elicitation_reaches_the_elicitor_in_both_eras(protocol, era):
    asked = []

    async def elicitor(question, schema, secret):
        asked.append((question, schema, secret))
        return {"name": "Ada"}

    async with MCPToolSource([toy()], elicitor=elicitor, protocol=protocol) as source:
        result = await (await tool_named(source, "ask")).invoke({}, None)
    assert result.content == f"{era} accept Ada"
    assert asked[0][0] == "What is your name?" and asked[0][1]["properties"]["name"]
    assert asked[0][2] is False


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_without_an_elicitor_the_client_declines(protocol):
    async with MCPToolSource([toy()], protocol=protocol) as source:
        result = await (await tool_named(source, "ask")).invoke({}, None)
    assert re.fullmatch(r"\S+ decline None", result.content)


def _start_everything_http(peers, port):
    env = {**os.environ, "PORT": str(port)}
    proc = subprocess.Popen(
        [peers.node, peers.everything_js, "streamableHttp"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_port(port)
    return proc


async def test_http_server_and_reconnect_after_it_drops_mid_call(peers):
    port = free_port()
    proc = _start_everything_http(peers, port)
    try:
        async with MCPToolSource([f"http://user:secret@127.0.0.1:{port}/mcp"]) as source:
            assert source.labels == [f"mcp:#1 http://127.0.0.1:{port}"]
            echo = await tool_named(source, "echo")
            assert "over http" in (await echo.invoke({"message": "over http"}, None)).content
            slow = await tool_named(source, "trigger-long-running-operation")
            call = asyncio.create_task(slow.invoke({"duration": 30, "steps": 3}, None))
            await asyncio.sleep(0.5)
            proc.kill()
            proc.wait()
            with pytest.raises(ToolSourceError, match="mcp:#1"):
                await asyncio.wait_for(call, 15)
            proc = _start_everything_http(peers, port)
            again = await echo.invoke({"message": "back again"}, None)
            assert "back again" in again.content
    finally:
        proc.kill()
        proc.wait()


def test_cli_prints_tools_as_json(peers):
    out = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "mcp", "tools", toy()],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    tools = json.loads(out.stdout)
    assert [t["name"] for t in tools][:2] == ["echo", "sleep"]
    assert set(tools[0]) == {"name", "label", "description", "input_schema"}
    assert tools[0]["label"].startswith("mcp:#1 python")


def test_cli_reports_a_failing_server():
    out = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "mcp", "tools", toy("exit_at_start.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "TOY_TOKEN is not set" in out.stderr


def test_agentkit_run_offers_mcp_tools(peers):
    server = f"{peers.time_server} --local-timezone UTC"
    out = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "run", "what time is it", "--mcp", server],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "get_current_time" in out.stdout and "convert_time" in out.stdout
