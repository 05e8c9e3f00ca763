"""An approval never lifts a deny: every way into a resumed run takes answers only for asks.

The paths: ``Agent.resume`` from a checkpoint, from a session's record, ``agentkit run --resume
--approve`` (a subprocess) and a durable executor's ``approve`` (plugins/executor-dbos). Each
gets answers for denied calls, allowed calls, ids it never held, ids of another run, and the
same answers replayed; a denied call never runs, and a refused answer leaves the run as it was.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Approval
from agentkit_core import ApprovalRefused
from agentkit_core import Checkpointer
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import Sessions
from agentkit_core import Tool
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import hookimpl
from agentkit_core import open_checkpointer
from agentkit_core import open_sessions
from agentkit_core import tool
from agentkit_core.plugin import SUSPENDED
from agentkit_core.plugin import PolicyEngine
from agentkit_core.plugin import Verdict
from agentkit_core.testing import ScriptedModel
from tests.conftest import run_cli
from tests.view_runs import POLICY_PLUGIN

#: A fresh manager for what runs outside a test's fixtures (a Hypothesis test, a
#: parametrize), never the process-wide one.
PM = PluginManager()

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("allow", "ask", "deny")


class ByPrefix:
    """Decides a call by its tool's name: ``allow_*``, ``ask_*``, ``deny_*``."""

    AGENTKIT_NAME = "by-prefix"

    @hookimpl
    def agentkit_before_tool_call(self, ctx: Any, call: ToolCall) -> ToolDecision | None:
        kind = call.name.split("_", 1)[0]
        if kind == "ask":
            return ToolDecision.ask("a person decides")
        if kind == "deny":
            return ToolDecision.deny("never", rule="no-" + call.name)
        return None


class Rules(PolicyEngine):
    """Asks about every call; denies every call once ``deny`` is set (a rule added later)."""

    name = "rules"
    deny = False

    def evaluate(self, call: ToolCall, source: str | None, grants: Any) -> ToolDecision:
        if self.deny:
            return ToolDecision("deny", "frozen", rule="freeze")
        return ToolDecision("ask", "a person decides", rule="ask-all")

    def removes(self, name: str, source: str) -> bool:
        return False

    def compile_grant(self, grant: Any) -> Any:
        return None, (), ()


HOOKS = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[ByPrefix()]))


def toolset(kinds: list[str], ran: list[str]) -> list[Tool]:
    """One tool per call, named for its verdict, that notes each call it runs."""

    def make(name: str) -> Tool:
        @tool(name=name)
        def act() -> str:
            """Do the thing."""
            ran.append(name)
            return f"did {name}"

        return act

    return [make(f"{kind}_{i}") for i, kind in enumerate(kinds)]


def batch(kinds: list[str]) -> Message:
    return Message.assistant(
        "", [ToolCall(f"c{i}", f"{kind}_{i}", "{}") for i, kind in enumerate(kinds)]
    )


class Path_:
    """One way of holding a run and resuming it: a checkpoint, or a session's record."""

    def __init__(self, kind: str, cp: Checkpointer, sessions: Sessions) -> None:
        self.kind, self.cp, self.sessions = kind, cp, sessions
        self.session_id = ""

    def agent(self, kinds: list[str], ran: list[str], steps: list[Any]) -> Agent:
        return Agent(
            "gate",
            model=ScriptedModel(steps),
            tools=toolset(kinds, ran),
            hooks=HOOKS,
            checkpointer=self.cp if self.kind == "checkpoint" else None,
        )

    async def run(self, agent: Agent) -> Any:
        ctx = agent.new_context()
        if self.kind == "session":
            recorder = await Recorder.start(self.sessions)
            self.session_id = recorder.session_id
            ctx.recorder = recorder
        return await agent.run("do the batch", ctx=ctx)

    async def resume(self, agent: Agent, run_id: str, answers: Any) -> Any:
        ctx = agent.new_context(run_id)
        if self.kind == "session":
            ctx.recorder = await Recorder.resume(self.sessions, self.session_id)
        return await agent.resume(run_id, answers, ctx=ctx)

    async def still_suspended(self, run_id: str) -> bool:
        if self.kind == "checkpoint":
            saved = await self.cp.resume(run_id)
            return saved is not None and saved.status == SUSPENDED
        state = (await Recorder.resume(self.sessions, self.session_id)).state
        return state.run == run_id and bool(state.held)


@pytest.fixture
async def cp(pm) -> Any:
    checkpointer = await open_checkpointer("memory://", manager=pm)
    yield checkpointer
    await checkpointer.aclose()


@pytest.fixture
async def sessions(pm) -> Any:
    async with await open_sessions("memory://", manager=pm) as opened:
        yield opened


# ---------------------------------------------------------------- the example the attack found


@pytest.mark.parametrize("kind", ["checkpoint", "session"])
async def test_approving_a_denied_call_is_refused_on_the_record_and_the_run_waits(
    kind: str, cp: Checkpointer, sessions: Sessions
) -> None:
    ran: list[str] = []
    seen: list[Verdict] = []
    way = Path_(kind, cp, sessions)
    kinds = ["ask", "deny"]
    agent = way.agent(kinds, ran, [batch(kinds), "finished"])
    held = await way.run(agent)
    assert held.status == "suspended" and [c.id for c in held.pending] == ["c0"]

    again = way.agent(kinds, ran, ["finished"])
    again.verdict_observer = seen.append
    with pytest.raises(ApprovalRefused, match=r"'c1' \(tool 'deny_1'\) was denied") as refused:
        await way.resume(again, held.run_id, {"c0": True, "c1": True})
    assert refused.value.refused == {"c1": "deny"}
    assert "waiting: c0" in str(refused.value)
    assert ran == []
    assert await way.still_suspended(held.run_id)
    assert [(v.namespace, v.verdict, v.subject_id) for v in seen] == [("approval", "refused", "c1")]
    if kind == "session":  # the refusal is in the session's record
        path = await sessions.path(way.session_id)
        bodies = [i.body for i in path if i.kind == "verdict" and i.body["hook"] == "approval"]
        assert [(b["decision"], b["call"]) for b in bodies] == [("refused", "c1")]

    done = await way.resume(way.agent(kinds, ran, ["finished"]), held.run_id, {"c0": True})
    assert done.status == "done" and ran == ["ask_0"]
    denied = next(m for m in done.transcript if m.tool_call_id == "c1")
    assert denied.is_error and "denied" in denied.content


async def test_a_deny_from_one_layer_outweighs_an_ask_from_another_in_the_session(pm) -> None:
    """The policy asks about every call, a hook denies one: that one is not held."""
    ran: list[str] = []
    kinds = ["ask", "deny"]
    async with await open_sessions("memory://", manager=pm) as sessions:
        recorder = await Recorder.start(sessions)
        agent = Agent(
            "gate",
            model=ScriptedModel([batch(kinds)]),
            tools=toolset(kinds, ran),
            hooks=HOOKS,
            policy=Rules(),
        )
        ctx = agent.new_context()
        ctx.recorder = recorder
        held = await agent.run("go", ctx=ctx)
        state = (await Recorder.resume(sessions, recorder.session_id)).state
        assert [c.id for c in held.pending] == ["c0"]
        assert [c.id for c in state.held] == ["c0"]
        assert state.decisions == {"c0": "ask", "c1": "deny"}
        again = Agent("gate", model=ScriptedModel(["x"]), tools=toolset(kinds, ran), hooks=HOOKS)
        ctx = again.new_context(held.run_id)
        ctx.recorder = await Recorder.resume(sessions, recorder.session_id)
        with pytest.raises(ApprovalRefused, match="'c1'"):
            await again.resume(held.run_id, ["c1"], ctx=ctx)
        assert ran == []


async def test_an_answer_for_a_call_allowed_without_asking_is_refused(cp: Checkpointer) -> None:
    ran: list[str] = []
    way = Path_("checkpoint", cp, None)  # type: ignore[arg-type]
    kinds = ["allow", "ask"]
    held = await way.run(way.agent(kinds, ran, [batch(kinds)]))
    with pytest.raises(ApprovalRefused, match=r"'c0' \(tool 'allow_0'\) was allowed without"):
        await way.resume(way.agent(kinds, ran, ["x"]), held.run_id, ["c0", "c1"])
    assert ran == []


#: Answers that say neither yes nor no: each is refused, never read by its truthiness.
UNCLEAR = [
    {"c0": "false"},
    {"c0": "no"},
    {"c0": 1},
    {"c0": 0},
    {"c0": None},
    {"c0": [False]},
    {0: True},
    [0],
    [{"c0": False}],
]


@pytest.mark.parametrize("kind", ["checkpoint", "session"])
@pytest.mark.parametrize("answers", UNCLEAR, ids=repr)
async def test_an_unclear_answer_is_refused_and_the_run_waits(
    kind: str, answers: Any, cp: Checkpointer, sessions: Sessions
) -> None:
    ran: list[str] = []
    way = Path_(kind, cp, sessions)
    held = await way.run(way.agent(["ask"], ran, [batch(["ask"]), "finished"]))
    with pytest.raises(ConfigError, match=r"neither yes nor no|are text") as refused:
        await way.resume(way.agent(["ask"], ran, ["finished"]), held.run_id, answers)
    assert not isinstance(refused.value, ApprovalRefused)
    assert ran == [] and await way.still_suspended(held.run_id)
    done = await way.resume(way.agent(["ask"], ran, ["finished"]), held.run_id, {"c0": False})
    assert done.status == "done" and ran == []


@given(
    approved=st.one_of(
        st.none(), st.integers(), st.floats(), st.text(), st.lists(st.booleans(), max_size=2)
    )
)
def test_an_approval_says_yes_or_no_in_a_boolean_and_nothing_else(approved: Any) -> None:
    with pytest.raises(ConfigError, match=r"neither yes nor no: answer True .* or False"):
        Approval("c1", approved)
    with pytest.raises(ConfigError) as refused:  # the mapping shape, through the gate
        Approval.checked({"c1": approved}, [ToolCall("c1", "act", "{}")], run_id="r")
    assert f"call 'c1' is {approved!r}" in str(refused.value)


async def test_a_deny_added_to_the_policy_after_the_ask_outweighs_the_approval(
    cp: Checkpointer,
) -> None:
    """The answer is checked against the policy again: its deny now stands."""
    ran: list[str] = []
    policy = Rules()
    agent = Agent(
        "gate",
        model=ScriptedModel([batch(["ask"]), "done"]),
        tools=toolset(["ask"], ran),
        policy=policy,
        checkpointer=cp,
    )
    held = await agent.run("go")
    policy.deny = True
    done = await agent.resume(held.run_id, {"c0": True})
    assert ran == [] and done.status == "done"
    result = next(m for m in done.transcript if m.tool_call_id == "c0")
    assert result.is_error and "frozen" in result.content


# ---------------------------------------------------------------- generated: no deny ever runs

answers_for = st.dictionaries(
    st.one_of(
        st.sampled_from([f"c{i}" for i in range(5)]),  # the run's own ids, or past its end
        st.sampled_from(["ghost", "c1 ", "C1", "c\u200b1", "other:c0"]),  # ids it never held
    ),
    st.booleans(),
    max_size=5,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=5).filter(lambda k: "ask" in k),
    answers=answers_for,
    as_approvals=st.booleans(),
    kind=st.sampled_from(["checkpoint", "session"]),
)
async def test_no_denied_call_ever_runs_whatever_the_answers(
    kinds: list[str], answers: dict[str, bool], as_approvals: bool, kind: str
) -> None:
    ran: list[str] = []
    cp = await open_checkpointer("memory://", manager=PM)
    try:
        async with await open_sessions("memory://", manager=PM) as sessions:
            way = Path_(kind, cp, sessions)
            held = await way.run(way.agent(kinds, ran, [batch(kinds), "finished"]))
            assert ran == []  # nothing of a held batch runs before the answers
            given_ = (
                [Approval(k, v, "human:t") for k, v in answers.items()] if as_approvals else answers
            )
            asks = {f"c{i}" for i, k in enumerate(kinds) if k == "ask"}
            stray = set(answers) - asks
            if stray:
                with pytest.raises(ApprovalRefused) as refused:
                    await way.resume(way.agent(kinds, ran, ["finished"]), held.run_id, given_)
                assert set(refused.value.refused) == stray
                assert ran == [] and await way.still_suspended(held.run_id)
                return
            done = await way.resume(way.agent(kinds, ran, ["finished"]), held.run_id, given_)
            assert done.status == "done"
            approved = {f"ask_{c[1:]}" for c, yes in answers.items() if yes}
            allowed = {f"allow_{i}" for i, k in enumerate(kinds) if k == "allow"}
            assert set(ran) == approved | allowed
            assert not any(name.startswith("deny_") for name in ran)
            # a replay of the same answers finds nothing held: refused or not resumable
            with pytest.raises(ConfigError):
                await way.resume(way.agent(kinds, ran, ["again"]), held.run_id, given_)
            assert set(ran) == approved | allowed
    finally:
        await cp.aclose()


async def test_a_call_answered_both_ways_is_refused_not_read_by_the_last_answer(
    cp: Checkpointer, sessions: Sessions
) -> None:
    ran: list[str] = []
    agent = Path_("checkpoint", cp, sessions).agent(["ask"], ran, [batch(["ask"]), "done"])
    held = await agent.run("go")
    # a no then a yes: the yes came last, but which was meant is unclear
    both = [Approval("c0", False, "human:a"), Approval("c0", True, "human:b")]
    with pytest.raises(ConfigError, match=r"'c0' is both approved and refused"):
        await agent.resume(held.run_id, both)
    with pytest.raises(ConfigError, match=r"'c0' is both approved and refused"):
        await agent.resume(held.run_id, iter(both))
    assert ran == []
    done = await agent.resume(held.run_id, [Approval("c0", True), Approval("c0", True)])
    assert done.status == "done" and ran == ["ask_0"]  # the same answer twice is one answer


@given(answers=st.lists(st.tuples(st.sampled_from(["c0", "c1"]), st.booleans()), max_size=6))
def test_a_no_given_for_a_call_is_never_outvoted_by_a_yes(
    answers: list[tuple[str, bool]],
) -> None:
    held = [ToolCall("c0", "act", "{}"), ToolCall("c1", "act", "{}")]
    given_ = [Approval(call, yes, "human:t") for call, yes in answers]
    both = {call for call, _ in answers if (call, True) in answers and (call, False) in answers}
    if both:
        with pytest.raises(ConfigError, match="both approved and refused"):
            Approval.checked(given_, held, run_id="r")
        return
    checked = Approval.checked(given_, held, run_id="r")
    assert {call: a.approved for call, a in checked.items()} == dict(answers)


# ---------------------------------------------------------------- the CLI

DENY_LOOKUP = (
    POLICY_PLUGIN
    + """

@hookimpl
def agentkit_before_tool_call(ctx, call):
    if call.name == "transfer":
        return ToolDecision.ask("a person approves transfers")
    if call.name == "lookup":
        return ToolDecision.deny("no lookups", rule="no-lookup")
    return None
"""
)


def test_the_cli_refuses_to_approve_a_denied_call_and_the_hint_resumes_as_pasted(
    make_site: Any, tmp_path: Path
) -> None:
    site = make_site("gate")
    site.add("agentkit-test-gate", {"gate": "akt_gate"}, {"akt_gate": DENY_LOOKUP})
    tools = ("--tools", "tests.view_runs:CLI_TOOLS")
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    first = run_cli(
        "run",
        "pay",
        *tools,
        "--model",
        "test",
        "--store",
        store,
        "--json",
        cwd=ROOT,
        pythonpath=[Path(site.path)],
    )
    assert first.returncode == 1, first.stderr
    data = json.loads(first.stdout)
    (pending,) = data["pending"]
    denied = next(
        c["id"]
        for m in data["transcript"]
        for c in m.get("tool_calls") or []
        if c["name"] == "lookup"
    )
    hint = next(line for line in first.stderr.splitlines() if "approve with:" in line)
    command = shlex.split(hint.split("approve with: ", 1)[1].split(" (--deny")[0])
    assert "--tools" in command and "--model" in command
    # the denied call's id given as an approval: exit 2, the verdict named, nothing ran
    refused = run_cli(*command[1:], "--approve", denied, cwd=ROOT, pythonpath=[Path(site.path)])
    assert refused.returncode == 2, refused.stderr
    assert f"{denied!r} (tool 'lookup') was denied" in refused.stderr
    # without the tools the approved transfer cannot run: the resume fails, the run waits on
    bare = ["run", "--store", store, "--model", "test", "--resume", data["run_id"]]
    missing = run_cli(*bare, "--approve", pending["id"], cwd=ROOT, pythonpath=[Path(site.path)])
    assert missing.returncode == 2 and "has no tool 'transfer'" in missing.stderr
    # the hint as printed resumes the run
    ok = run_cli(*command[1:], cwd=ROOT, pythonpath=[Path(site.path)])
    assert ok.returncode == 0, ok.stderr
    assert "moved" in ok.stdout or "TestModel answer" in ok.stdout
