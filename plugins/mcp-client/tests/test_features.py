"""Sampling, roots, resources, prompts, progress and cancellation, against real servers: the npm
reference "everything" server and ``servers/cancellable.py`` (python SDK)."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from agentkit_mcp_client import PROGRESS_ATTRIBUTE
from agentkit_mcp_client import SAMPLING_TOOL
from agentkit_mcp_client import MCPToolSource
from agentkit_mcp_client import list_prompts
from agentkit_mcp_client import render_prompt
from mcp_client_helpers import toy

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import GuardChain
from agentkit_core import Kit
from agentkit_core import LiveInstructions
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import ToolDecision
from agentkit_core.events import ToolFinished
from agentkit_core.events import ToolProgress
from agentkit_core.events import ToolStarted
from agentkit_core.plugin import Guard
from agentkit_core.plugin import GuardDecision
from agentkit_core.plugin import GuardInput
from agentkit_core.plugin import PolicyEngine
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

SAMPLE = tool_call("trigger-sampling-request", json.dumps({"prompt": "hi", "maxTokens": 20}))


class Fixed(PolicyEngine):
    """Decides every sampling request ``kind`` by the rule "sampling"; allows tool calls."""

    name = "fixed"

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.seen: list[tuple[str, str | None]] = []

    def evaluate(self, call, source, grants):
        self.seen.append((call.name, source))
        if call.name == SAMPLING_TOOL:
            return ToolDecision(self.kind, "sampling is decided here", rule="sampling")
        return ToolDecision.allow(rule="tools")

    def removes(self, name, source):
        return False

    def compile_grant(self, grant):
        return (), (), ()


def _tool_result(result):
    return next(m for m in result.transcript if m.role == "tool")


async def _run_sampling(peers, *, policy=None, elicitor=None, **options):
    asked = []

    def answer(request):
        if request.messages[0].role == "system":  # the server's request, not the run's turn
            asked.append(request)
        return "the run's model answered"

    model = ScriptedModel([Message.assistant("", [SAMPLE]), answer, answer])
    async with MCPToolSource([peers.everything()], **options) as source:
        agent = Agent(model=model, tools=await source.list_tools(), policy=policy)
        ctx = RunContext(elicitor=elicitor)
        result = await agent.run("sample", ctx=ctx)
    return result, asked, ctx


async def test_sampling_is_answered_by_the_runs_model_through_its_invoker(peers):
    result, asked, ctx = await _run_sampling(peers)
    (request,) = asked
    assert request.messages[0] == Message.system("You are a helpful test server.")
    assert "hi" in request.messages[1].text and request.messages[1].role == "user"
    assert request.settings["max_tokens"] == 20
    assert "the run's model answered" in _tool_result(result).text
    assert result.usage.requests == 3  # the sampling call counts on the run
    (span,) = ctx.trace.find("mcp_sampling")
    assert span.attributes["server"].startswith("mcp:#1")
    assert [s.parent for s in ctx.trace.find("model_call")].count("mcp_sampling") == 1


class NoServerPrompts(Guard):
    """Blocks the everything server's sampling prompt; rewrites what the model answers."""

    name = "no-server-prompts"

    def __init__(self, block: bool) -> None:
        self.block = block

    def check_input(self, inp: GuardInput) -> GuardDecision:
        if self.block and "helpful test server" in inp.text:
            return GuardDecision.block("no prompts from servers")
        return GuardDecision.ALLOW

    def check_output(self, message: Message) -> GuardDecision:
        if "the run's model answered" in message.text:
            return GuardDecision.rewrite("[answer withheld]", "answers stay here")
        return GuardDecision.ALLOW


@pytest.mark.parametrize("block", [True, False])
async def test_the_runs_guards_check_what_a_server_samples(peers, block):
    asked = []

    def answer(request):
        asked.append(request)
        return "the run's model answered"

    model = ScriptedModel([Message.assistant("", [SAMPLE]), answer, answer])
    async with MCPToolSource([peers.everything()]) as source:
        chain = GuardChain([NoServerPrompts(block)])
        agent = Agent(model=model, tools=await source.list_tools(), guards=chain)
        result = await agent.run("sample")
    text = _tool_result(result).text
    if block:  # the request never reached the model; the server got the guard's refusal
        assert len(asked) == 1, asked
        assert "guard 'no-server-prompts' refused the sampling request" in text, text
    else:  # the model answered, and the server got the answer as the guards left it
        assert len(asked) == 2
        assert "[answer withheld]" in text and "the run's model answered" not in text, text


async def test_sampling_denied_by_the_policy_is_an_error_for_the_server(peers):
    policy = Fixed("deny")
    result, asked, _ = await _run_sampling(peers, policy=policy)
    assert asked == []
    text = _tool_result(result).text
    assert "the policy denies sampling (rule 'sampling'" in text, text
    assert (SAMPLING_TOOL, "mcp:#1 node") in policy.seen


async def test_sampling_the_policy_asks_about_goes_to_a_person(peers):
    questions = []

    async def elicitor(question, schema, secret):
        questions.append(question)
        return {"allow": True}

    result, asked, _ = await _run_sampling(peers, policy=Fixed("ask"), elicitor=elicitor)
    assert len(asked) == 1 and "mcp:#1 node asks to use this run's model" in questions[0]
    assert "the run's model answered" in _tool_result(result).text


async def test_sampling_the_policy_asks_about_without_an_elicitor_is_refused(peers):
    result, asked, _ = await _run_sampling(peers, policy=Fixed("ask"))
    assert asked == []
    assert "the run has no elicitor to ask" in _tool_result(result).text


async def test_sampling_false_announces_no_sampling(peers):
    async with MCPToolSource([peers.everything()], sampling=False) as source:
        names = {t.name for t in await source.list_tools()}
    assert "trigger-sampling-request" not in names and "echo" in names


async def test_sampling_outside_a_run_is_refused_not_hung(peers):
    async with MCPToolSource([peers.everything()]) as source:
        tool = next(t for t in await source.list_tools() if t.name == SAMPLE.name)
        started = time.monotonic()
        result = await tool.invoke({"prompt": "hi", "maxTokens": 5}, None)
    assert time.monotonic() - started < 10
    assert "no agent run's tool call in flight" in str(result.content)


async def test_roots_are_the_configured_workspace(peers, tmp_path):
    async with MCPToolSource([peers.everything()], roots=[tmp_path]) as source:
        tool = next(t for t in await source.list_tools() if t.name == "get-roots-list")
        result = await tool.invoke({}, None)
    assert tmp_path.as_uri() in str(result.content)


def test_roots_must_be_directories(tmp_path):
    with pytest.raises(ConfigError, match="not a directory"):
        MCPToolSource([], roots=[tmp_path / "missing"])


async def test_resources_as_tools(peers):
    async with MCPToolSource([peers.everything()], resource_tools=True) as source:
        tools = {t.name: t for t in await source.list_tools()}
        listing = await tools["everything_list_resources"].invoke({}, None)
        uri = next(w for w in listing.content.split() if w.endswith("features.md"))
        read = await tools["everything_read_resource"].invoke({"uri": uri}, None)
        missing = await tools["everything_read_resource"].invoke({"uri": "demo://nope"}, None)
    assert "demo://resource/static/document/" in listing.content
    assert "#" in read.content and not read.is_error
    assert missing.is_error and "reading resource 'demo://nope'" in missing.content


async def test_a_resource_part_under_a_budget_refreshed_by_updates(peers):
    async with MCPToolSource([peers.everything()]) as source:
        (label,) = source.labels
        uris = [f"demo://resource/static/document/{n}" for n in ("features.md", "startup.md")]
        part = await source.resource_part(label, uris, max_bytes=100_000)
        live = LiveInstructions([part], budget=None)
        assert f"## {uris[0]}" in live.text and f"## {uris[1]}" in live.text
        small = part.render(len(f"## {uris[0]}\n{part.texts[uris[0]]}".encode()))
        assert [o.what for o in small.omissions] == [uris[1]]
        toggle = next(t for t in await source.list_tools() if t.name == "toggle-subscriber-updates")
        await toggle.invoke({}, None)  # the server now sends resources/updated now and every 5 s
        deadline = time.monotonic() + 10
        while part.refreshes == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await toggle.invoke({}, None)
    assert part.refreshes >= 1


async def test_prompts_are_listed_and_rendered_into_messages(peers):
    async with MCPToolSource([peers.everything()]) as source:
        (label,) = source.labels
        names = [p.name for p in await list_prompts(source, label)]
        messages = await render_prompt(source, label, "args-prompt", {"city": "Paris"})
        assert await source.render_prompt("node", "args-prompt", {"city": "Paris"}) == messages
        with pytest.raises(ConfigError, match="no MCP server labelled 'other'"):
            await render_prompt(source, "other", "args-prompt")
    assert {"simple-prompt", "args-prompt"} <= set(names)
    assert messages == [Message.user("What's weather in Paris?")]


async def test_a_kit_renders_a_prompt_of_the_servers_it_connected(peers):
    async with await Kit.open(model="test", mcp=[peers.everything()]) as kit:
        messages = await kit.mcp_prompt("node", "args-prompt", {"city": "Paris"})
    assert messages == [Message.user("What's weather in Paris?")]
    async with Kit(model="test") as bare:
        with pytest.raises(ConfigError, match="no MCP server is connected") as caught:
            await bare.mcp_prompt("everything", "args-prompt")
    assert caught.value.value == "everything"


async def test_progress_is_recorded_on_the_tool_call_span(peers):
    call = tool_call("trigger-long-running-operation", json.dumps({"duration": 0.3, "steps": 3}))
    model = ScriptedModel([Message.assistant("", [call]), "done"])
    async with MCPToolSource([peers.everything()]) as source:
        ctx = RunContext()
        await Agent(model=model, tools=await source.list_tools()).run("go", ctx=ctx)
    (span,) = ctx.trace.find("tool_call")
    events = span.attributes[PROGRESS_ATTRIBUTE]
    assert [(e["progress"], e["total"]) for e in events] == [(1, 3), (2, 3), (3, 3)]


async def test_progress_notifications_are_the_run_s_tool_progress_events(peers):
    call = tool_call("trigger-long-running-operation", json.dumps({"duration": 0.3, "steps": 3}))
    model = ScriptedModel([Message.assistant("", [call]), "done"])
    async with MCPToolSource([peers.everything()]) as source:
        agent = Agent(model=model, tools=await source.list_tools())
        events = [e async for e in agent.run_stream_events("go")]
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert [(e.call_id, e.progress, e.total) for e in progress] == [
        (call.id, 1, 3),
        (call.id, 2, 3),
        (call.id, 3, 3),
    ]
    started = next(e for e in events if isinstance(e, ToolStarted))
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert started.seq < progress[0].seq and progress[-1].seq < finished.seq


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_cancelled_run_cancels_the_call_on_the_server(tmp_path, protocol):
    marker = tmp_path / "marker"
    server = {"program": toy("cancellable.py").split()[0]}
    server["args"] = toy("cancellable.py").split()[1:]
    server["env"] = {**os.environ, "CANCEL_MARKER": str(marker)}
    model = ScriptedModel([Message.assistant("", [tool_call("wait")])])
    async with MCPToolSource([server], protocol=protocol) as source:
        agent = Agent(model=model, tools=await source.list_tools())
        run = asyncio.ensure_future(agent.run("wait"))
        deadline = time.monotonic() + 10
        while not (marker.exists() and "started" in marker.read_text()):
            assert time.monotonic() < deadline, "the call never reached the server"
            await asyncio.sleep(0.05)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        while "cancelled" not in marker.read_text():
            assert time.monotonic() < deadline, marker.read_text()
            await asyncio.sleep(0.05)
    assert marker.read_text().split() == ["started", "cancelled"]
