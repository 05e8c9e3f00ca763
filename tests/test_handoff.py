"""Kit(handoffs=): a run handed from one kit's agent to another's over one transcript and one
session, resumed in another process under the agent it was handed to, with the conversation's
grants following it and a deny never lifted."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import open_checkpointer
from agentkit_core import open_sessions
from agentkit_core import tool
from agentkit_core.plugin import Grant
from agentkit_core.plugin import PolicyEngine
from agentkit_core.plugin import SessionState
from agentkit_core.plugin import grant_scope
from agentkit_core.testing import ScriptedModel

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

ROOT = Path(__file__).resolve().parent.parent


def bare() -> PluginManager:
    return PluginManager(entry_points=False)


def call(name: str, call_id: str) -> Message:
    return Message.assistant("", [ToolCall(call_id, name, "{}")])


@tool
def refund() -> str:
    """Refund the order."""
    return "refunded"


async def session_items(url: str, session_id: str) -> list[Any]:
    async with await open_sessions(url, manager=PM) as sessions:
        return await sessions.path(session_id)


# ---------------------------------------------------------------------- the switch


async def test_a_handoff_switches_instructions_tools_and_model_over_one_session(
    tmp_path: Path,
    pm,
) -> None:
    url = f"sqlite:///{tmp_path}/s.sqlite"
    billing_model = ScriptedModel([call("refund", "c2"), "refunded, bye"], name="billing-model")
    triage_model = ScriptedModel([call("transfer_to_billing", "c1")], name="triage-model")
    billing = Kit(
        name="billing",
        description="refunds and invoices",
        model=billing_model,
        instructions="You are billing.",
        tools=[refund],
        manager=bare(),
    )
    async with (
        await open_sessions(url, manager=pm) as sessions,
        await Kit.open(
            name="triage",
            model=triage_model,
            instructions="You are triage.",
            handoffs=[billing],
            session=sessions,
            manager=bare(),
        ) as triage,
    ):
        agent = Agent.from_config(triage.config())
        kinds = [e.kind async for e in agent.run_stream_events("refund my order")]
        session = triage.session_id
    [first] = triage_model.requests
    assert [t.name for t in first.tools] == ["transfer_to_billing"]
    assert "refunds and invoices" in first.tools[0].description
    assert first.messages[0].text == "You are triage."
    to_billing = billing_model.requests[0]
    assert [t.name for t in to_billing.tools] == ["refund"]
    assert [m.role for m in to_billing.messages] == ["system", "user", "assistant", "tool"]
    assert to_billing.messages[0].text == "You are billing."
    assert "billing" in to_billing.messages[-1].text  # the call's result says it happened
    assert kinds.count("handoff") == 1
    assert kinds.index("handoff") < kinds.index("run_finished")
    items = await session_items(url, session)
    [handoff] = [i for i in items if i.kind == "handoff"]
    assert handoff.body["from"] == "triage" and handoff.body["to"] == "billing"
    assert handoff.body["call"] == "c1"
    state = SessionState(session)
    seen = []
    for item in items:
        state.feed(item.kind, item.body, item.id)
        if item.kind == "instructions":
            assert state.instructions is not None
            seen.append([(p.id, p.text) for p in state.instructions.parts])
    assert seen == [[("product", "You are triage.")], [("product", "You are billing.")]]
    responses = [i.body for i in items if i.kind == "response"]
    assert [r["model"] for r in responses] == ["triage-model", "billing-model", "billing-model"]


async def test_the_handoff_event_names_both_agents_and_the_session_item() -> None:
    billing = Kit(name="billing", model=ScriptedModel(["ok"]), manager=bare())
    triage = Kit(
        name="triage",
        model=ScriptedModel([call("transfer_to_billing", "c1")]),
        handoffs=[billing],
        manager=bare(),
    )
    agent = Agent.from_config(triage.config())
    events = [e async for e in agent.run_stream_events("hi")]
    [handoff] = [e for e in events if e.kind == "handoff"]
    assert handoff.to_json() | {"seq": 0} == {
        "kind": "handoff",
        "run_id": handoff.run_id,
        "seq": 0,
        "item_id": None,
        "from_agent": "triage",
        "to_agent": "billing",
        "call_id": "c1",
    }


def test_two_targets_of_one_name_and_a_target_of_the_kit_s_own_name_are_refused() -> None:
    one = Kit(name="billing desk", model="test", manager=bare())
    two = Kit(name="billing_desk!", model="test", manager=bare())
    assert Kit(name="t", model="test", handoffs=[one], manager=bare()).tools()[0].name == (
        "transfer_to_billing_desk"
    )
    with pytest.raises(ConfigError, match=r"'billing desk' and 'billing_desk!'.*transfer_to_"):
        Kit(name="t", model="test", handoffs=[one, two], manager=bare())
    with pytest.raises(ConfigError, match="of its own name"):
        Kit(name="billing desk", model="test", handoffs=[one], manager=bare())
    kit = Kit(name="t", model="test", tools=[refund], manager=bare())
    with pytest.raises(ConfigError, match="already offers a tool named 'transfer_to_refund'"):
        clash = Kit(name="t2", model="test", tools=[transfer_to_refund], manager=bare())
        clash.add_handoffs(Kit(name="refund", model="test", manager=bare()))
    kit.add_handoffs(one, two.__class__(name="other", model="test", manager=bare()))
    with pytest.raises(ConfigError, match="'billing desk' and 'billing_desk!'"):
        kit.add_handoffs(two)


@tool
def transfer_to_refund() -> str:
    """A tool that takes a handoff's name."""
    return ""


async def test_a_target_hands_back_and_a_cycle_is_bounded_by_max_turns() -> None:
    script: list[Any] = [call("transfer_to_b", "c1"), call("transfer_to_a", "c2"), "back at a"]
    model = ScriptedModel(script)
    b = Kit(name="b", model=model, instructions="B", manager=bare())
    a = Kit(name="a", model=model, instructions="A", handoffs=[b], manager=bare())
    b.add_handoffs(a)
    result = await Agent.from_config(a.config()).run("go")
    assert (result.output, result.agent) == ("back at a", "a")
    assert [r.messages[0].text for r in model.requests] == ["A", "B", "A"]
    loop = ScriptedModel([call(f"transfer_to_{'ba'[i % 2]}", f"c{i}") for i in range(20)])
    b2 = Kit(name="b", model=loop, manager=bare(), max_turns=5)
    a2 = Kit(name="a", model=loop, handoffs=[b2], manager=bare(), max_turns=5)
    b2.add_handoffs(a2)
    with pytest.raises(Exception, match="max_turns=5"):
        await Agent.from_config(a2.config()).run("ping-pong")
    assert len(loop.requests) == 5


def test_parts_from_answers_for_each_kit_and_none_for_text_no_kit_rendered() -> None:
    b = Kit(name="b", model="test", instructions="You are B.", manager=bare())
    a = Kit(name="a", model="test", instructions="You are A.", handoffs=[b], manager=bare())
    parts = Kit.parts_from(a)
    found_b = parts("You are B.")
    assert found_b is not None and [p.text for p in found_b[0]] == ["You are B."]
    found_a = parts("You are A.")
    assert found_a is not None and [p.text for p in found_a[0]] == ["You are A."]
    assert parts("a prompt a hook rewrote") is None


# ---------------------------------------------------------------------- policy and grants


class Rules(PolicyEngine):
    """Denies ``deny``'s tools, allows what a live grant names or ``allow`` holds, asks else."""

    name = "rules"

    def __init__(self, deny: tuple[str, ...] = (), allow: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.deny, self.allow = deny, allow

    def evaluate(self, call: ToolCall, source: str | None, grants: Any) -> ToolDecision:
        if call.name in self.deny:
            return ToolDecision("deny", "never", rule=f"deny:{call.name}")
        if call.name in self.allow or any(call.name in rules for rules in grants):
            return ToolDecision("allow", "allowed", rule="allow")
        return ToolDecision("ask", "a person decides", rule="ask")

    def removes(self, name: str, source: str) -> bool:
        return False

    def compile_grant(self, grant: Grant) -> Any:
        return frozenset(grant.tools), grant.tools, ()


@tool
def read_skill(ctx: RunContext) -> str:
    """Read the deploy skill, whose allowed-tools grant deploy and wipe."""
    assert ctx.policy is not None
    grant = Grant(
        "skill:deploy", ("deploy", "wipe"), trusted=True, scope=grant_scope(ctx), run=ctx.run_id
    )
    ctx.policy.grant(grant, ctx)
    return "skill read"


def ops_tools(ran: list[str]) -> list[Any]:
    @tool
    def deploy() -> str:
        """Deploy."""
        ran.append("deploy")
        return "deployed"

    @tool
    def wipe() -> str:
        """Wipe."""
        ran.append("wipe")
        return "wiped"

    return [deploy, wipe]


@pytest.mark.parametrize("granted", [True, False])
async def test_a_grant_follows_the_conversation_and_never_lifts_the_target_s_deny(
    tmp_path: Path, granted: bool, pm
) -> None:
    ran: list[str] = []
    ops_model = ScriptedModel([call("deploy", "d1"), call("wipe", "w1"), "done"])
    ops = Kit(
        name="ops",
        model=ops_model,
        tools=ops_tools(ran),
        policy=Rules(deny=("wipe",), allow=("transfer_to_desk",)),
        manager=bare(),
    )
    desk_script = [call("read_skill", "r1")] if granted else []
    desk_model = ScriptedModel([*desk_script, call("transfer_to_ops", "h1")])
    async with (
        await open_sessions(f"sqlite:///{tmp_path}/s.sqlite", manager=pm) as sessions,
        await Kit.open(
            name="desk",
            model=desk_model,
            tools=[read_skill],
            handoffs=[ops],
            policy=Rules(allow=("read_skill", "transfer_to_ops")),
            session=sessions,
            manager=bare(),
        ) as desk,
    ):
        result = await Agent.from_config(desk.config()).run("ship it")
    if not granted:  # ops' engine asks: nothing the desk did lets deploy through
        assert result.status == "suspended" and [c.name for c in result.pending] == ["deploy"]
        assert ran == []
        return
    assert result.status == "done" and ran == ["deploy"]  # the grant held under ops' engine
    [wiped] = [m for m in result.transcript if m.tool_call_id == "w1"]
    assert wiped.is_error and "never" in wiped.text  # the grant names wipe; ops denies it


async def test_a_grant_made_under_the_target_ends_at_the_conversation_s_next_task(
    tmp_path: Path,
    pm,
) -> None:
    ran: list[str] = []
    script: list[Any] = [
        call("read_skill", "r1"),
        call("deploy", "d1"),
        "deployed",
        call("deploy", "d2"),
        "no",
    ]
    ops = Kit(
        name="ops",
        model=ScriptedModel(script),
        tools=[read_skill, *ops_tools(ran)],
        policy=Rules(allow=("read_skill",)),
        manager=bare(),
    )
    desk_model = ScriptedModel([call("transfer_to_ops", "h1"), call("transfer_to_ops", "h2")])
    async with (
        await open_sessions(f"sqlite:///{tmp_path}/s.sqlite", manager=pm) as sessions,
        await Kit.open(
            name="desk", model=desk_model, handoffs=[ops], session=sessions, manager=bare()
        ) as desk,
    ):
        agent = Agent.from_config(desk.config())
        first = await agent.run("deploy")
        assert first.status == "done" and ran == ["deploy"]
        second = await agent.run("deploy again")  # the user's next message: the grant ended
    assert second.status == "done" and ran == ["deploy"]
    [refused] = [m for m in second.transcript if m.tool_call_id == "d2"]
    assert refused.is_error and "ended at the user's next message" in refused.text


async def test_an_approval_after_a_handoff_never_lifts_the_target_s_deny(pm) -> None:
    ran: list[str] = []
    engine = Rules()
    ops = Kit(
        name="ops",
        model=ScriptedModel([call("wipe", "w1"), "stopped"]),
        tools=ops_tools(ran),
        policy=engine,
        manager=bare(),
    )
    desk = Kit(
        name="desk",
        model=ScriptedModel([call("transfer_to_ops", "h1")]),
        handoffs=[ops],
        manager=bare(),
    )
    agent = Agent.from_config(
        desk.config(), checkpointer=await open_checkpointer("memory://", manager=pm)
    )
    held = await agent.run("wipe it")
    assert held.status == "suspended" and [c.id for c in held.pending] == ["w1"]
    engine.deny = ("wipe",)  # a rule added while the run waited
    result = await agent.resume(held.run_id, {"w1": True})  # goes on under ops, ops' engine
    assert result.status == "done" and result.output == "stopped" and ran == []
    assert (held.agent, result.agent) == ("ops", "ops")  # the agent in charge, not the one started
    [wiped] = [m for m in result.transcript if m.tool_call_id == "w1"]
    assert wiped.is_error and "never" in wiped.text


async def test_a_handoff_a_person_approved_goes_on_under_the_target_on_resume(pm) -> None:
    ops_model = ScriptedModel(["ops here"], name="ops-model")
    ops = Kit(name="ops", model=ops_model, instructions="You are ops.", manager=bare())
    desk = Kit(
        name="desk",
        model=ScriptedModel([call("transfer_to_ops", "h1")]),
        handoffs=[ops],
        policy=Rules(),  # asks about every call, the handoff too
        manager=bare(),
    )
    agent = Agent.from_config(
        desk.config(), checkpointer=await open_checkpointer("memory://", manager=pm)
    )
    held = await agent.run("escalate")
    assert held.status == "suspended" and [c.id for c in held.pending] == ["h1"]
    kinds = [e.kind async for e in agent.resume_stream_events(held.run_id, {"h1": True})]
    assert "handoff" in kinds and kinds[-1] == "run_finished"
    [sent] = ops_model.requests
    assert sent.messages[0].text == "You are ops." and sent.messages[-1].role == "tool"


# ---------------------------------------------------------------------- resuming


def write_module(tmp_path: Path) -> None:
    (tmp_path / "handoff_kits.py").write_text(
        textwrap.dedent(
            """
            from agentkit_core import Kit, Message, PluginManager, ToolCall, ToolDecision, tool
            from agentkit_core.plugin import PolicyEngine
            from agentkit_core.testing import ScriptedModel

            class AskRefunds(PolicyEngine):
                name = "ask-refunds"

                def evaluate(self, call, source, grants):
                    if call.name == "refund":
                        return ToolDecision("ask", "a person approves refunds", rule="ask")
                    return ToolDecision("allow", "fine", rule="allow")

                def removes(self, name, source):
                    return False

                def compile_grant(self, grant):
                    return None, (), ()

            @tool
            def refund() -> str:
                '''Refund the order.'''
                return "refunded"

            def kits(sessions, resume=None, billing_steps=(), handoffs=True):
                bare = PluginManager(entry_points=False)
                billing = Kit(name="billing", instructions="You are billing.",
                              model=ScriptedModel(list(billing_steps), name="billing-model"),
                              tools=[refund], policy=AskRefunds(), manager=bare)
                triage_model = ScriptedModel(
                    [Message.assistant("", [ToolCall("c1", "transfer_to_billing", "{}")])],
                    name="triage-model")
                return billing, Kit.open(
                    name="triage", instructions="You are triage.", model=triage_model,
                    handoffs=[billing] if handoffs else [], session=sessions, resume=resume,
                    manager=bare)
            """
        )
    )


async def test_a_run_suspended_after_a_handoff_resumes_in_another_process_under_the_target(
    tmp_path: Path,
    pm,
) -> None:
    write_module(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        import handoff_kits  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    url = f"sqlite:///{tmp_path}/s.sqlite"
    cp_url = f"sqlite:///{tmp_path}/cp.sqlite"
    steps = [Message.assistant("", [ToolCall("r1", "refund", "{}")])]
    sessions = await open_sessions(url, manager=pm)
    _, opening = handoff_kits.kits(sessions, billing_steps=steps)
    cp = await open_checkpointer(cp_url, manager=pm)
    async with sessions, await opening as triage:
        result = await Agent.from_config(triage.config(), checkpointer=cp).run("refund please")
        session = triage.session_id
    assert result.status == "suspended" and [c.id for c in result.pending] == ["r1"]
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from agentkit_core import Agent, ConfigError, PluginManager, open_checkpointer
        from agentkit_core import open_sessions
        import handoff_kits

        async def main():
            pm = PluginManager()
            cp = await open_checkpointer({cp_url!r}, manager=pm)
            sessions = await open_sessions({url!r}, manager=pm)
            _, opening = handoff_kits.kits(sessions, {session!r}, handoffs=False)
            async with await opening as lone:
                try:
                    await Agent.from_config(lone.config(), checkpointer=cp).resume(
                        {result.run_id!r}, {{"r1": True}})
                except ConfigError as exc:
                    print("refused:", exc)
            billing, opening = handoff_kits.kits(sessions, {session!r}, ["all refunded"])
            async with await opening as kit:
                agent = Agent.from_config(kit.config(), checkpointer=cp)
                done = await agent.resume({result.run_id!r}, {{"r1": True}})
                [request] = billing.config().model.requests
                print(done.status, done.agent, done.output, request.messages[0].text,
                      [t.name for t in request.tools])
            await sessions.aclose()

        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    refused, resumed = done.stdout.strip().splitlines()
    assert "handed to the agent 'billing'" in refused and "reaches: none" in refused
    assert resumed == "done billing all refunded You are billing. ['refund']"
    items = await session_items(url, session)
    results = [i.body["message"] for i in items if i.kind == "tool_result"]
    assert [m.text for m in results][-1] == "refunded"
    assert [i.body["to"] for i in items if i.kind == "handoff"] == ["billing"]


# ---------------------------------------------------------------------- random handoffs

NAMES = ("a", "b", "c")


def three_kits(model: ScriptedModel, sessions: Any) -> tuple[dict[str, Kit], Any]:
    """Kits b and c, and the opening of kit a on ``sessions``; each hands to the others."""
    b = Kit(name="b", model=model, instructions="You are b.", manager=bare(), max_turns=20)
    c = Kit(name="c", model=model, instructions="You are c.", manager=bare(), max_turns=20)
    b.add_handoffs(c)
    c.add_handoffs(b)
    opening = Kit.open(
        name="a",
        model=model,
        instructions="You are a.",
        handoffs=[b, c],
        session=sessions,
        manager=bare(),
        max_turns=20,
    )
    return {"b": b, "c": c}, opening


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(st.sampled_from(NAMES), max_size=6), st.integers(1, 3))
def test_random_handoffs_keep_one_session_path_and_each_agent_s_own_parts(
    hops: list[str], runs: int
) -> None:
    asyncio.run(random_handoffs(hops, runs))


async def random_handoffs(hops: list[str], runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/s.sqlite"
        steps: list[Any] = []
        expected: list[str] = []  # the agent each request is sent under
        for run in range(runs):
            current = "a"  # each run starts under kit a
            for n, hop in enumerate(hops):
                if hop == current:
                    continue
                expected.append(current)
                steps.append(call(f"transfer_to_{hop}", f"r{run}h{n}"))
                current = hop
            expected.append(current)
            steps.append(f"answer {run}")
        model = ScriptedModel(steps)
        sessions = await open_sessions(url, manager=PM)
        others, opening = three_kits(model, sessions)
        async with sessions, await opening as a:
            others["b"].add_handoffs(a)
            others["c"].add_handoffs(a)
            agent = Agent.from_config(a.config())
            for _ in range(runs):  # each a new conversation in the one session
                await agent.run("go")
            session = a.session_id
        assert [r.messages[0].text for r in model.requests] == [f"You are {n}." for n in expected]
        items = await session_items(url, session)  # checked: each item's parent the one before
        assert items[0].kind == "header"
        state, agent_now, recorded = SessionState(session), "a", []
        for item in items:
            state.feed(item.kind, item.body, item.id)
            if item.kind == "user" and item.body.get("source", "task") == "task":
                agent_now = "a"
            elif item.kind == "handoff":
                assert item.body["from"] == agent_now
                agent_now = item.body["to"]
            elif item.kind == "instructions":
                assert state.instructions is not None
                parts = [(p.id, p.text) for p in state.instructions.parts]
                assert parts == [("product", f"You are {agent_now}.")]
            elif item.kind == "response":
                recorded.append(agent_now)
        assert recorded == expected
