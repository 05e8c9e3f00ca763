"""Tool filtering and name prefixes against a real server (server-everything over stdio).

A filter names the server's own tool names; a prefix changes only the name the model sees:
the call still reaches the server under the original name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from agentkit_mcp_client import MCPToolSource
from mcp_client_helpers import free_port
from mcp_client_helpers import toy
from mcp_client_helpers import wait_port

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import ToolUnion
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call


async def names(source):
    return sorted(t.name for t in await source.list_tools())


@pytest.mark.parametrize(
    ("tool_filter", "expected"),
    [
        ("echo", ["echo"]),
        (["echo", "get-sum", "no-such-tool"], ["echo", "get-sum"]),
        (("get-sum",), ["get-sum"]),
        (lambda name: name.startswith("get-t"), ["get-tiny-image"]),
    ],
    ids=["a-name", "a-list", "a-tuple", "a-predicate"],
)
async def test_filter_by_name_names_or_predicate(peers, tool_filter, expected):
    async with MCPToolSource([peers.everything()], tool_filter=tool_filter) as source:
        assert await names(source) == expected


async def test_an_unfiltered_server_offers_everything_a_filter_can_pick_from(peers):
    async with MCPToolSource([peers.everything()]) as source:
        offered = await names(source)
    assert {"echo", "get-sum", "get-tiny-image"} <= set(offered) and len(offered) > 3


async def test_a_prefixed_tool_calls_the_server_under_its_own_name(peers):
    async with MCPToolSource([peers.everything()], prefix="ev_", tool_filter=["echo"]) as source:
        (echo,) = await source.list_tools()
        assert (echo.name, echo.remote_name) == ("ev_echo", "echo")
        result = await echo.invoke({"message": "through a prefix"}, None)
    # server-everything answers an unknown name with an error; this is its echo's answer
    assert not result.is_error and "Echo: through a prefix" in result.content


async def test_the_model_calls_the_prefixed_name(peers):
    async with MCPToolSource([peers.everything()], prefix="ev_", tool_filter="get-sum") as source:
        union = await ToolUnion.create([(source.label, source)])
        model = ScriptedModel(
            [Message.assistant("", [tool_call("ev_get-sum", json.dumps({"a": 2, "b": 40}))]), "ok"]
        )
        result = await Agent("adder", model, "", union, hooks=Hooks()).run("add 2 and 40")
    assert [t.name for t in model.requests[0].tools] == ["ev_get-sum"]
    (answer,) = [m for m in result.transcript if m.role == "tool"]
    assert answer.name == "ev_get-sum" and "42" in answer.text


async def test_add_takes_its_own_filter_and_prefix(peers):
    async with MCPToolSource([peers.everything()], tool_filter="echo") as source:
        await source.add(peers.everything(), tool_filter=["echo", "get-sum"], prefix="two_")
        assert await names(source) == ["echo", "two_echo", "two_get-sum"]


async def test_a_prefix_or_a_filter_resolves_a_collision():
    async with MCPToolSource() as source:
        await source.add(toy(), tool_filter="echo")
        await source.add(toy(), tool_filter="echo", prefix="b_")
        await source.add(toy(), tool_filter=lambda name: name == "sleep")
        assert await names(source) == ["b_echo", "echo", "sleep"]


async def test_the_kit_passes_filter_and_prefix_to_the_mcp_source(peers):
    options = {"servers": [peers.everything()], "tool_filter": ["echo"], "prefix": "ev_"}
    async with await Kit.open(model="test", tool_sources={"mcp": options}) as kit:
        assert [(o.name, o.source) for o in kit.tools()] == [("ev_echo", "mcp:#1 node")]


def test_cli_tools_json_has_label_description_and_input_schema(peers):
    out = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "mcp", "tools", peers.everything()],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    tools = {t["name"]: t for t in json.loads(out.stdout)}
    echo = tools["echo"]
    assert echo["label"] == "mcp:#1 node"
    assert echo["description"] == "Echoes back the input string"
    assert echo["input_schema"]["properties"]["message"]["type"] == "string"
    assert echo["input_schema"]["required"] == ["message"]
    assert {t["label"] for t in tools.values()} == {"mcp:#1 node"}


def test_cli_tools_json_from_a_url_is_labelled_by_scheme_and_host(peers):
    port = free_port()
    proc = subprocess.Popen(
        [peers.node, peers.everything_js, "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_port(port)
        url = f"http://user:secret@127.0.0.1:{port}/mcp?token=t0k"
        out = subprocess.run(
            [sys.executable, "-m", "agentkit_core", "mcp", "tools", url],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    finally:
        proc.kill()
        proc.wait()
    tools = json.loads(out.stdout)
    assert "echo" in {t["name"] for t in tools}
    assert {t["label"] for t in tools} == {f"mcp:#1 http://127.0.0.1:{port}"}
    assert "secret" not in out.stdout + out.stderr and "t0k" not in out.stdout + out.stderr
