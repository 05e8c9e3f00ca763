"""An agent served as one MCP tool (issue 8), checked with the Inspector and our client bridge."""

from __future__ import annotations

import pytest
from agentkit_mcp_client import MCPToolSource
from agentkit_mcp_server import as_tools
from agentkit_mcp_server import load_tools

from agentkit_core import AgentTool
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolResult


@pytest.fixture
def serve_cmd(serve_command) -> list[str]:
    """``agentkit mcp serve`` over the sample agent (conftest's ``http_server`` serves it too)."""
    return serve_command("sample_agent:AGENT")


def test_inspector_sees_the_agent_as_one_tool_and_calls_it(inspect, serve_cmd):
    (listed,) = inspect(serve_cmd, "--method", "tools/list")["tools"]
    assert listed["name"] == "reviewer"
    assert listed["inputSchema"]["required"] == ["task"]
    assert listed["inputSchema"]["properties"]["task"]["type"] == "string"
    called = inspect(
        serve_cmd,
        *("--method", "tools/call", "--tool-name", "reviewer", "--tool-arg", "task=the plan"),
    )
    assert called["content"] == [{"type": "text", "text": "reviewed: the plan"}]
    assert not called.get("isError")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_our_bridge_calls_a_served_agent(transport, serve_cmd, request):
    server = " ".join(serve_cmd) if transport == "stdio" else request.getfixturevalue("http_server")
    async with MCPToolSource([server]) as source:
        (reviewer,) = await source.list_tools()
        assert reviewer.name == "reviewer" and reviewer.parameters["required"] == ["task"]
        answer = await reviewer.invoke({"task": "release notes"}, None)
        assert (answer.content, answer.is_error) == ("reviewed: release notes", False)
        broken = await reviewer.invoke({"task": "explode"}, None)
        assert broken.is_error and "the reviewer model broke" in broken.content
        empty = await reviewer.invoke({"task": ""}, None)
        assert empty.is_error and "'task' must be a non-empty string" in empty.content
        again = await reviewer.invoke({"task": "still up?"}, None)  # the server survived
        assert again.content == "reviewed: still up?"


async def test_an_agent_loads_by_reference_and_is_served_beside_tools():
    (served,) = load_tools("sample_agent:AGENT")
    assert isinstance(served, AgentTool) and served.name == "reviewer"

    class Ping(Tool):
        def __init__(self) -> None:
            super().__init__("ping", "Answer pong.")

        async def invoke(self, arguments, ctx):
            return ToolResult("pong")

    ping, reviewer = as_tools([Ping(), served.agent])
    assert (ping.name, reviewer.name) == ("ping", "reviewer")
    assert isinstance(reviewer, AgentTool) and reviewer.agent is served.agent
    answer = await reviewer.invoke({"task": "side by side"}, RunContext())
    assert answer.content == "reviewed: side by side"
