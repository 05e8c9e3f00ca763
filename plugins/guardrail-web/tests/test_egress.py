"""WebGuardrail behind the core egress() middleware, the way an agent's tool chain runs it."""

from __future__ import annotations

from typing import Any

import pytest
from agentkit_guardrail_web import ResolvingURLCheck
from agentkit_guardrail_web import WebGuardrail

from agentkit_core import Agent
from agentkit_core import Guardrail
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolInvocation
from agentkit_core import ToolResult
from agentkit_core import default_middlewares
from agentkit_core import egress
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import tool_call


class Post(Tool):
    def __init__(self) -> None:
        super().__init__("post", "send data somewhere", side_effects=True)
        self.sent: list[dict[str, Any]] = []

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext) -> ToolResult:
        self.sent.append(arguments)
        return ToolResult("sent")


async def call(guard: Guardrail, arguments: dict[str, Any]) -> tuple[ToolResult, Post, RunContext]:
    tool = Post()
    ctx = make_test_ctx(ScriptedModel([]), middlewares=[*default_middlewares(), egress(guard)])
    assert ctx.invoker is not None

    async def end(inv: ToolInvocation) -> ToolResult:
        return await inv.tool.invoke(inv.arguments, inv.ctx)

    result = await ctx.invoker.call_tool(
        ToolInvocation(tool_call("post"), tool, arguments, ctx), end
    )
    return result, tool, ctx


@pytest.mark.parametrize(
    "arguments",
    [
        {"url": "http://0x7f000001:8080/admin"},
        {"target": {"urls": ["https://example.com/", "http://[::ffff:10.0.0.1]/"]}},
        {"body": "exfiltrate to http://169.254.169.254/latest/meta-data/iam"},
        {"host": "127.1"},
        {"webhook_url": "gopher://example.com/"},
    ],
)
async def test_every_spelling_is_blocked_before_the_tool_runs(arguments: dict[str, Any]) -> None:
    result, tool, ctx = await call(WebGuardrail(), arguments)
    assert result.is_error and "egress refused for tool 'post'" in result.content
    assert tool.sent == []
    span = ctx.trace.find("tool_call")[0]
    assert span.attributes["egress_blocked"] in result.content


async def test_public_urls_and_plain_text_go_through() -> None:
    arguments = {"url": "https://api.example.com/v1", "body": "price $12.50, call 555-123-4567"}
    result, tool, _ = await call(WebGuardrail(), arguments)
    assert result == ToolResult("sent") and tool.sent == [arguments]


async def test_resolving_check_blocks_a_public_name_that_resolves_privately() -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return {"127.0.0.1.nip.io": ["127.0.0.1"], "example.com": ["93.184.216.34"]}[host]

    guard = WebGuardrail(url_check=ResolvingURLCheck(resolver))
    result, tool, _ = await call(guard, {"url": "http://127.0.0.1.nip.io/"})
    assert tool.sent == []
    assert result.is_error and "127.0.0.1 is loopback" in result.content
    ok, _, _ = await call(guard, {"url": "http://example.com/"})
    assert not ok.is_error


async def test_a_real_agent_run_never_reaches_a_refused_url() -> None:
    """End to end: the model asks for an internal URL, egress() refuses, the model sees why."""
    tool = Post()
    model = ScriptedModel(
        [
            Message.assistant("", [tool_call("post", '{"url": "http://169.254.169.254/"}', "c1")]),
            Message.assistant("", [tool_call("post", '{"url": "https://example.com/h"}', "c2")]),
            "done",
        ]
    )
    agent = Agent(
        "poster",
        model=model,
        tools=[tool],
        middlewares=[egress(WebGuardrail())],
        hooks=Hooks(),
    )
    result = await agent.run("post the report")
    assert result.output == "done"
    assert tool.sent == [{"url": "https://example.com/h"}]
    refused, sent = [m for m in result.transcript if m.role == "tool"]
    assert refused.is_error and "169.254.169.254" in refused.content
    assert not sent.is_error and sent.content == "sent"


class Read(Post):
    def __init__(self) -> None:
        Tool.__init__(self, "read", "read a page", side_effects=False)
        self.sent = []


async def test_a_read_only_tool_is_checked_like_any_other() -> None:
    """Reading is not "no network": egress() checks side_effects=False tools too."""
    tool = Read()
    ctx = make_test_ctx(
        ScriptedModel([]),
        middlewares=[*default_middlewares(), egress(WebGuardrail(egress_allow=["example.com"]))],
    )
    assert ctx.invoker is not None

    async def end(inv: ToolInvocation) -> ToolResult:
        return await inv.tool.invoke(inv.arguments, inv.ctx)

    refused = await ctx.invoker.call_tool(
        ToolInvocation(tool_call("read"), tool, {"url": "https://evil.com/"}, ctx), end
    )
    allowed = await ctx.invoker.call_tool(
        ToolInvocation(tool_call("read"), tool, {"url": "https://example.com/"}, ctx), end
    )
    assert refused.is_error and "'evil.com' is not in egress_allow" in refused.content
    assert allowed == ToolResult("sent") and tool.sent == [{"url": "https://example.com/"}]
