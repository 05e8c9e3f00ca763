"""Resources, prompts, the client's model and user, progress and bearer auth, for real: MCP's
server conformance scenarios against ``conformance_kit.py``, and our own client against
``serve_tools`` in-process."""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from agentkit_mcp_client import MCPToolSource
from agentkit_mcp_client import render_prompt
from agentkit_mcp_server import BearerTokens
from agentkit_mcp_server import ServedResource
from agentkit_mcp_server import kit_resources
from agentkit_mcp_server import log
from agentkit_mcp_server import serve_tools
from conformance_kit import TOOLS
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from mcp_server_helpers import free_port
from mcp_server_helpers import wait_listening

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

HERE = Path(__file__).resolve().parent
MODULES = HERE.parents[2] / ".ci" / "cache" / "mcp" / "node_modules"
#: The server scenarios of MCP's conformance suite that conformance_kit.py serves.
SERVED = [
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-error",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "completion-complete",
    "logging-set-level",
    "tools-call-with-progress",
    "tools-call-with-logging",
    "tools-call-sampling",
    "tools-call-elicitation",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
]

#: The scenarios left out, each with why (not skipped silently: the test below checks the
#: suite still lists exactly these besides SERVED).
LEFT_OUT = {
    "tools-call-audio": "an agentkit ToolResult has no audio output part to serve",
    "tools-call-embedded-resource": "an agentkit ToolResult has no embedded-resource part",
    "tools-call-mixed-content": "needs audio and embedded-resource parts in one result",
    "json-schema-2020-12": "needs a tool with a hand-written 2020-12 schema ($defs, $ref)",
    "elicitation-sep1034-defaults": "a scenario of its own tool with fixed defaults",
    "elicitation-sep1330-enums": "a scenario of its own tool with fixed enum schemas",
    "server-sse-polling": "needs an SSE event store (resumable streams), not configured",
}


def _conformance() -> list[str]:
    node, cli = MODULES / ".bin" / "node", MODULES / ".bin" / "conformance"
    if not (node.exists() and cli.exists()):
        pytest.fail(f"the conformance suite is not in {MODULES}; install it: bash .ci/setup")
    return [str(node), str(cli.resolve())]


@pytest.fixture(scope="module")
def kit_url():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "conformance_kit.py"), str(port)],
        cwd=HERE,
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else ""
        assert line.startswith("http://"), f"conformance_kit.py printed {line!r}"
        yield f"http://localhost:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


def test_the_left_out_scenarios_are_all_the_others():
    out = subprocess.run([*_conformance(), "list"], capture_output=True, text=True, timeout=60)
    server_part = out.stdout.split("Client scenarios")[0]
    listed = set(re.findall(r"^\s+- (\S+)", server_part, re.MULTILINE))
    assert listed == set(SERVED) | set(LEFT_OUT), out.stdout


@pytest.mark.parametrize("scenario", SERVED)
def test_server_conformance_scenario(kit_url, scenario, tmp_path):
    out = subprocess.run(
        [*_conformance(), "server", "--url", kit_url, "--scenario", scenario, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    report = out.stdout + out.stderr
    assert re.search(r"Passed: (\d+)/\1, 0 failed", report), report


async def _serving(port, **options):
    server = asyncio.ensure_future(serve_tools([], transport="http", port=port, **options))
    await wait_listening(port, server)
    return server


async def _stop(server):
    server.cancel()
    with pytest.raises(asyncio.CancelledError):
        await server


async def test_a_kits_instruction_parts_and_prompts_reach_our_client():
    kit = Kit(model="test", instructions="Answer in French.")
    resources = {**kit_resources(kit), "data://blob": ServedResource(data=b"\x00\x01")}
    prompts = {"greet": "Say hello to {name}."}
    port = free_port()
    server = await _serving(port, resources=resources, prompts=prompts)
    try:
        async with MCPToolSource([f"http://127.0.0.1:{port}/mcp"], resource_tools=True) as source:
            tools = {t.name: t for t in await source.list_tools()}
            listing = await tools["agentkit_list_resources"].invoke({}, None)
            read = await tools["agentkit_read_resource"].invoke(
                {"uri": "agentkit://instructions/product"}, None
            )
            (label,) = source.labels
            messages = await render_prompt(source, label, "greet", {"name": "Ada"})
    finally:
        await _stop(server)
    assert "agentkit://instructions/product" in listing.content
    assert read.content == "Answer in French."
    assert messages == [Message.user("Say hello to Ada.")]


async def test_bearer_auth_refuses_a_missing_or_wrong_token():
    port = free_port()
    server = await _serving(port, token_verifier=BearerTokens({"right-token": "ci"}))
    url = f"http://127.0.0.1:{port}/mcp"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    try:
        async with httpx.AsyncClient() as http:
            none = await http.post(url, json=body, headers=accept)
            wrong = await http.post(
                url, json=body, headers={**accept, "Authorization": "Bearer wrong"}
            )
            right = await http.post(
                url, json=body, headers={**accept, "Authorization": "Bearer right-token"}
            )
    finally:
        await _stop(server)
    assert none.status_code == 401 and "resource_metadata" in none.headers["www-authenticate"]
    assert wrong.status_code == 401
    assert right.status_code == 200


def test_auth_options_need_a_verifier_and_a_fixed_port():
    with pytest.raises(ConfigError, match="need token_verifier="):
        asyncio.run(serve_tools([], transport="http", port=free_port(), required_scopes=["x"]))
    with pytest.raises(ConfigError, match="needs a fixed port"):
        asyncio.run(
            serve_tools([], transport="http", port=0, token_verifier=BearerTokens({"t": "c"}))
        )


def test_a_token_from_an_empty_variable_is_an_error_naming_it(monkeypatch):
    monkeypatch.delenv("AGENTKIT_TEST_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="AGENTKIT_TEST_TOKEN holds no token"):
        BearerTokens.from_env("AGENTKIT_TEST_TOKEN")


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1), st.text())
def test_only_the_exact_token_passes_and_none_is_ever_shown(token, other):
    tokens = BearerTokens({token: "client"})
    assert token not in repr(tokens) or token in "<BearerTokens: 1 token(s)>"
    assert asyncio.run(tokens.verify_token(token)) is not None
    assert (asyncio.run(tokens.verify_token(other)) is None) == (other != token)


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_a_served_tool_samples_the_calling_runs_model(protocol):
    port = free_port()
    server = asyncio.ensure_future(serve_tools(TOOLS, transport="http", port=port))
    await wait_listening(port, server)
    sample = tool_call("test_sampling", json.dumps({"prompt": "ping"}))
    model = ScriptedModel([Message.assistant("", [sample]), "pong from the run", "done"])
    try:
        async with MCPToolSource([f"http://127.0.0.1:{port}/mcp"], protocol=protocol) as source:
            result = await Agent(model=model, tools=await source.list_tools()).run("go")
    finally:
        await _stop(server)
    said = next(m for m in result.transcript if m.role == "tool").text
    if protocol == "legacy":  # the 2025-11-25 handshake: the server asks mid-call
        assert "LLM response: pong from the run" in said
    else:
        assert "cannot sample the client's model in a 2026-07-28 session" in said
        assert "protocol='legacy'" in said


async def test_log_outside_a_served_call_is_not_sent_and_a_bad_level_is_named():
    assert await log("info", "nobody is listening") is False
    with pytest.raises(ConfigError, match="log level 'loud' is not one of MCP's: debug, info"):
        await log("loud", "x")
