"""agentkit mcp serve, checked with the official MCP Inspector and with our own client bridge."""

from __future__ import annotations

import base64
import subprocess
import sys

import pytest
from agentkit_mcp_client import MCPToolSource
from agentkit_mcp_server import as_tools
from agentkit_mcp_server import load_tools

from agentkit_core import AgentTool
from agentkit_core import ConfigError


def check_with_inspector(inspect, target):
    listed = inspect(target, "--method", "tools/list")
    add = next(t for t in listed["tools"] if t["name"] == "add")
    assert add["inputSchema"]["required"] == ["a", "b"]
    assert add["annotations"]["readOnlyHint"] is True
    called = inspect(
        target,
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=2",
        "--tool-arg",
        "b=40",
    )
    assert called["content"] == [{"type": "text", "text": "42"}]
    assert called["structuredContent"] == {"sum": 42}
    exploded = inspect(target, "--method", "tools/call", "--tool-name", "explode")
    assert exploded["isError"] is True
    assert "RuntimeError: boom from the tool" in exploded["content"][0]["text"]


def test_inspector_over_stdio(inspect, serve_cmd):
    check_with_inspector(inspect, serve_cmd)


def test_typed_content_parts_reach_the_client_as_mcp_blocks(inspect, serve_cmd):
    from sample_tools import PNG

    called = inspect(serve_cmd, "--method", "tools/call", "--tool-name", "attachments")
    text, image, link, document, audio = called["content"]
    assert text == {"type": "text", "text": "four parts follow"}
    assert (image["type"], image["mimeType"]) == ("image", "image/png")
    assert base64.b64decode(image["data"]) == PNG
    assert (link["type"], link["uri"]) == ("resource_link", "https://example.org/cat.png")
    resource = document["resource"]
    assert (document["type"], resource["mimeType"]) == ("resource", "application/pdf")
    assert resource["uri"] == "attachment:report.pdf"
    assert base64.b64decode(resource["blob"]) == b"%PDF-1.7\n%\xe2\xe3"
    assert (audio["type"], audio["mimeType"]) == ("audio", "audio/wav")
    assert base64.b64decode(audio["data"]).startswith(b"RIFF")


def test_inspector_over_http(inspect, http_server):
    check_with_inspector(inspect, [http_server, "--transport", "http"])


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_our_bridge_against_our_server(transport, serve_cmd, request):
    server = " ".join(serve_cmd) if transport == "stdio" else request.getfixturevalue("http_server")
    async with MCPToolSource([server]) as source:
        tools = {t.name: t for t in await source.list_tools()}
        assert tools["add"].side_effects is False
        result = await tools["add"].invoke({"a": 1, "b": 2}, None)
        assert (result.content, result.structured, result.is_error) == ("3", {"sum": 3}, False)
        failed = await tools["explode"].invoke({}, None)
        assert failed.is_error and "boom from the tool" in failed.content
        again = await tools["add"].invoke({"a": 5, "b": 5}, None)  # the server survived
        assert again.content == "10"


def test_bad_tools_reference():
    with pytest.raises(ConfigError, match=r"--tools 'sample_tools': expected 'module:attr'"):
        load_tools("sample_tools")
    with pytest.raises(ConfigError, match=r"has no attribute 'NOPE'"):
        load_tools("sample_tools:NOPE")
    with pytest.raises(ConfigError, match=r"cannot import 'no_such_module_x'"):
        load_tools("no_such_module_x:TOOLS")


def test_an_agent_is_served_as_one_tool():
    class Agent:
        name = "helper"

        async def run(self, task):
            raise NotImplementedError

    (tool,) = as_tools(Agent())
    assert isinstance(tool, AgentTool) and tool.name == "helper"
    assert tool.parameters["required"] == ["task"]
    with pytest.raises(ConfigError, match="expected an agentkit Tool, an agent or a list"):
        as_tools(42)


def test_cli_reports_a_bad_reference():
    out = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "mcp", "serve", "--tools", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "expected 'module:attr'" in out.stderr
