"""Verdicts: the one record of a decision, its body in the session, and the one observer."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import HookError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import tool
from agentkit_core.plugin import Verdict
from agentkit_core.plugin import open_session_store
from agentkit_core.plugin import report_verdict
from agentkit_core.testing import ScriptedModel


@pytest.fixture
async def sessions(pm) -> Any:
    async with Sessions(await open_session_store("memory://", manager=pm)) as opened:
        yield opened


@tool
def transfer(amount: int) -> str:
    """Move money."""
    return f"moved {amount}"


@tool
def wipe(path: str) -> str:
    """Delete a path."""
    return f"wiped {path}"


def two_calls() -> Message:
    return Message.assistant(
        "",
        [
            ToolCall("c1", "transfer", '{"amount": 5}'),
            ToolCall("c2", "wipe", '{"path": "/"}'),
        ],
    )


def decide(ctx: Any, call: ToolCall) -> ToolDecision | None:
    if call.name == "wipe":
        return ToolDecision.deny("never delete", rule="no-wipe")
    return ToolDecision.ask("a person approves transfers")


texts = st.text(max_size=12)


@given(
    namespace=st.sampled_from(["policy", "guard", "approval", "hook"]),
    hook=st.sampled_from(["before_tool_call", "approval", "grant", "input", "stop"]),
    verdict=st.sampled_from(["allow", "ask", "deny", "stop", "rewrite", "block"]),
    subject=texts,
    subject_id=texts,
    rule=texts,
    plugin=texts,
    reason=texts,
    by=texts,
    tool_source=texts,
    scope=texts,
    details=st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3),
)
def test_a_verdict_reads_back_from_its_body(**fields: Any) -> None:
    verdict = Verdict(**fields)
    body = verdict.to_body()
    assert body["source"] == verdict.plugin and body["decision"] == verdict.verdict
    if verdict.about_call:  # the v1 shape of a tool call's verdict
        assert "subject" not in body and "subject_id" not in body
    assert Verdict.from_body(body) == verdict


def test_an_old_body_reads_as_a_hook_verdict() -> None:
    old = {
        "hook": "before_tool_call",
        "decision": "deny",
        "reason": "never delete",
        "source": "user",
        "rule": "",
        "call": "c2",
        "tool": "wipe",
        "run": "r1",
    }
    assert Verdict.from_body(old) == Verdict(
        "hook",
        "before_tool_call",
        "deny",
        "wipe",
        "c2",
        plugin="user",
        reason="never delete",
        run="r1",
    )
    assert Verdict.from_body({"decision": 3, "details": "x"}) == Verdict("hook", "", "")


async def test_report_verdict_records_then_tells_the_observer(sessions: Sessions) -> None:
    recorder = await Recorder.start(sessions)
    seen: list[Verdict] = []
    agent = Agent("a", "test", verdict_observer=seen.append, recorder=recorder)
    ctx = agent.new_context("run-7")
    verdict = Verdict("guard", "input", "block", "pii", "part:product", plugin="guard-redact")
    assert ctx.report_verdict(verdict).run == "run-7"
    assert seen == [
        Verdict(
            "guard", "input", "block", "pii", "part:product", plugin="guard-redact", run="run-7"
        )
    ]
    # outside a run: the recorder and observer given
    report_verdict(
        Verdict("policy", "grant", "allow", "skill:x"), recorder=recorder, observer=seen.append
    )
    await recorder.flush()
    bodies = [i.body for i in await sessions.path(recorder.session_id) if i.kind == "verdict"]
    assert [(b["namespace"], b["decision"], b.get("run")) for b in bodies] == [
        ("guard", "block", "run-7"),
        ("policy", "allow", None),
    ]
    assert bodies[0]["subject"] == "pii" and bodies[0]["subject_id"] == "part:product"


def test_an_observer_that_raises_is_named() -> None:
    def broken(verdict: Verdict) -> None:
        raise RuntimeError("display gone")

    ctx = Agent("a", "test", verdict_observer=broken).new_context()
    with pytest.raises(
        HookError, match=r"verdict observer .*broken raised RuntimeError: display gone"
    ):
        ctx.report_verdict(Verdict("policy", "before_tool_call", "deny", "wipe", "c1"))


async def test_the_observer_sees_the_folds_and_the_approvals(sessions: Sessions) -> None:
    seen: list[Verdict] = []
    kit = await Kit.open(
        model=ScriptedModel([two_calls(), "done"]),
        tools=[transfer, wipe],
        before_tool_call=decide,
        verdict_observer=seen.append,
        manager=PluginManager(entry_points=False),
        session=sessions,
    )
    assert kit.config().verdict_observer == seen.append
    agent = Agent.from_config(kit.config())
    held = await agent.run("pay and wipe")
    assert held.status == "suspended" and [c.id for c in held.pending] == ["c1"]
    assert [(v.namespace, v.verdict, v.subject_id, v.rule) for v in seen] == [
        ("hook", "ask", "c1", ""),
        ("hook", "deny", "c2", "no-wipe"),
    ]
    assert held.stop_reason == "user: a person approves transfers"
    seen.clear()
    done = await agent.resume(held.run_id, {"c1": True})
    assert done.output == "done"
    assert [(v.namespace, v.hook, v.verdict, v.subject_id, v.by) for v in seen] == [
        ("approval", "approval", "allow", "c1", "person"),
        ("hook", "before_tool_call", "deny", "c2", ""),
    ]
    path = await sessions.path(kit.session_id)
    recorded = [Verdict.from_body(i.body) for i in path if i.kind == "verdict"]
    assert [v.verdict for v in recorded] == ["ask", "deny", "allow", "deny"]
    assert recorded[1].rule == "no-wipe" and recorded[1].reason == "never delete"
    assert {v.run for v in recorded} == {held.run_id}


async def test_a_stop_is_a_hook_verdict_the_observer_sees() -> None:
    seen: list[Verdict] = []
    agent = Agent(
        "a",
        ScriptedModel([Message.assistant("", [ToolCall("c1", "transfer", '{"amount": 1}')])]),
        tools=[transfer],
        hooks=Hooks.of("budget", should_stop_after_turn=lambda turn: "enough"),
        verdict_observer=seen.append,
    )
    result = await agent.run("go")
    assert result.status == "stopped"
    assert [(v.namespace, v.hook, v.verdict, v.plugin, v.reason) for v in seen] == [
        ("hook", "should_stop_after_turn", "stop", "budget", "enough")
    ]
