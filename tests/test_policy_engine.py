"""The policy seam in core: a reference engine runs the conformance suite, and the agent folds
an engine's decisions with the hooks, filters what it offers, ends grants at a new task and
records approvals with who gave them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Approval
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import ToolUnion
from agentkit_core import hookimpl
from agentkit_core import open_checkpointer
from agentkit_core import tool
from agentkit_core._tool_calls import decide
from agentkit_core.plugin import Grant
from agentkit_core.plugin import PolicyEngine
from agentkit_core.plugin import Verdict
from agentkit_core.plugin import grant_scope
from agentkit_core.plugin import load_policy
from agentkit_core.plugin import open_session_store
from agentkit_core.plugin import resolve_policy
from agentkit_core.testing import PolicyEngineConformance
from agentkit_core.testing import ScriptedModel

RANK = {"allow": 0, "ask": 1, "deny": 2}


class NameEngine(PolicyEngine):
    """A reference engine: one verdict per tool name; a grant entry is a tool name it allows."""

    name = "names"

    def __init__(self, verdicts: dict[str, str], default: str = "ask") -> None:
        super().__init__()
        self.verdicts = verdicts
        self.default = default

    def evaluate(self, call: ToolCall, source: str | None, grants: Sequence[Any]) -> ToolDecision:
        if call.name in self.verdicts:
            kind = self.verdicts[call.name]
            return ToolDecision(kind, f"{call.name}: {kind}", rule=call.name)  # type: ignore[arg-type]
        if any(call.name in g for g in grants):  # a grant beats the default, not a rule
            return ToolDecision("allow", f"{call.name} is granted", rule=f"grant:{call.name}")
        return ToolDecision(self.default, "no rule names it", rule="default")  # type: ignore[arg-type]

    def removes(self, name: str, source: str) -> bool:
        return self.verdicts.get(name) == "deny"

    def compile_grant(self, grant: Grant) -> Any:
        return frozenset(grant.tools), grant.tools, ()


def conformance_engine() -> NameEngine:
    return NameEngine({"read": "allow", "write": "ask", "wipe": "deny"})


class TestReferenceEngine(PolicyEngineConformance):
    def make_engine(self) -> PolicyEngine:
        return conformance_engine()


@tool
def read(path: str) -> str:
    """Read a file."""
    return f"read {path}"


@tool
def write(path: str) -> str:
    """Write a file."""
    return f"wrote {path}"


@tool
def wipe(path: str) -> str:
    """Delete a file."""
    return f"wiped {path}"


def calls(*names: str) -> Message:
    return Message.assistant(
        "", [ToolCall(f"c{i}", n, '{"path": "x"}') for i, n in enumerate(names, start=1)]
    )


def agent(steps: list[Any], engine: PolicyEngine | None = None, **kw: Any) -> Agent:
    return Agent(
        "a",
        ScriptedModel(steps),
        tools=[read, write, wipe],
        policy=engine if engine is not None else conformance_engine(),
        hooks=kw.pop("hooks", Hooks()),
        **kw,
    )


# ----------------------------------------------------------------- the agent and the engine


@pytest.fixture
async def cp(pm) -> Any:
    checkpointer = await open_checkpointer("memory://", manager=pm)
    yield checkpointer
    await checkpointer.aclose()


async def test_a_removed_tool_is_never_offered_and_allowed_calls_run() -> None:
    a = agent([calls("read"), "done"])
    result = await a.run("go")
    assert result.output == "done"
    offered = [t.name for t in a.model.requests[0].tools]  # type: ignore[attr-defined]
    assert offered == ["read", "write"]
    assert result.transcript[-2].text == "read x"


async def test_a_removed_tool_is_filtered_from_a_union_by_its_label() -> None:
    class ByLabel(NameEngine):
        def removes(self, name: str, source: str) -> bool:
            return source.startswith("mcp:")

    union = await ToolUnion.create([("tools", [read]), ("mcp:#1 files", [write])])
    a = Agent("a", ScriptedModel(["ok"]), tools=union, policy=ByLabel({}))
    await a.run("go")
    assert [t.name for t in a.model.requests[0].tools] == ["read"]  # type: ignore[attr-defined]


async def test_the_batch_with_an_ask_is_held_and_a_denied_sibling_is_refused(cp: Any) -> None:
    seen: list[Verdict] = []
    engine = conformance_engine()
    a = agent(
        [calls("read", "write", "wipe"), "done"],
        engine,
        verdict_observer=seen.append,
        checkpointer=cp,
    )
    held = await a.run("go")
    assert held.status == "suspended" and [c.id for c in held.pending] == ["c2"]
    assert held.stop_reason == "names: write: ask"
    assert [(v.namespace, v.verdict, v.rule) for v in seen] == [
        ("policy", "allow", "read"),
        ("policy", "ask", "write"),
        ("policy", "deny", "wipe"),
    ]
    assert [d.call.id for d in engine.deferred(held.run_id)] == ["c2"]
    answers = engine.release(held.run_id, [Approval("c2", by="human:alice")])
    seen.clear()
    done = await a.resume(held.run_id, answers)
    results = {m.tool_call_id: m for m in done.transcript if m.role == "tool"}
    assert results["c1"].text == "read x" and results["c2"].text == "wrote x"
    assert results["c3"].is_error and "denied by names: wipe: deny" in results["c3"].text
    approvals = [v for v in seen if v.namespace == "approval"]
    assert [(v.subject_id, v.verdict, v.by) for v in approvals] == [("c2", "allow", "human:alice")]
    assert engine.deferred(held.run_id) == []  # the run finished: nothing kept


async def test_a_refusal_with_a_reason_reaches_the_model(cp: Any) -> None:
    a = agent([calls("write"), "ok"], checkpointer=cp)
    held = await a.run("go")
    done = await a.resume(held.run_id, [Approval("c1", False, "human:bob", "not on Fridays")])
    (result,) = [m for m in done.transcript if m.role == "tool"]
    assert result.is_error and "not on Fridays" in result.text


@pytest.mark.parametrize(
    ("policy", "hook", "expected", "source"),
    [
        ("allow", "deny", "deny", "user"),
        ("allow", "ask", "ask", "user"),
        ("deny", "allow", "deny", "names"),
        ("ask", "ask", "ask", "names"),  # a tie: the engine is first
        ("ask", None, "ask", "names"),
        ("allow", None, "allow", "names"),
    ],
)
async def test_the_engine_folds_with_the_hooks_deny_over_ask_over_allow(
    policy: str, hook: str | None, expected: str, source: str
) -> None:
    engine = NameEngine({"write": policy})
    hooks = Hooks.of(before_tool_call=lambda call: None if hook is None else ToolDecision(hook))  # type: ignore[arg-type]
    ctx = agent([], engine, hooks=hooks).new_context()
    decision = await decide(agent([], engine, hooks=hooks), ctx, ToolCall("c1", "write", "{}"))
    assert (decision.kind, decision.source) == (expected, source)


@given(
    st.sampled_from(["allow", "ask", "deny"]),
    st.lists(st.sampled_from(["allow", "ask", "deny", None]), max_size=4),
)
async def test_the_fold_is_the_strongest_of_all(policy: str, hooks: list[str | None]) -> None:
    engine = NameEngine({"write": policy})
    chain = Hooks(
        before_tool_call=tuple(
            (f"plugin-{i}", lambda call, v=v: None if v is None else ToolDecision(v))  # type: ignore[misc]
            for i, v in enumerate(hooks)
        )
    )
    a = agent([], engine, hooks=chain)
    decision = await decide(a, a.new_context(), ToolCall("c1", "write", "{}"))
    assert RANK[decision.kind] == max(RANK[v] for v in [policy, *filter(None, hooks)])


async def test_a_new_task_ends_the_last_tasks_grants_and_resume_keeps_them(pm) -> None:
    sessions = Sessions(await open_session_store("memory://", manager=pm))
    recorder = await Recorder.start(sessions)
    engine = conformance_engine()
    seen: list[Verdict] = []
    a = agent(
        [calls("read", "write"), "one", calls("read"), "two"],
        engine,
        recorder=recorder,
        verdict_observer=seen.append,
    )
    engine.verdicts.pop("read")  # read asks by default, but for the grant
    ctx = a.new_context("r1")
    engine.grant(
        Grant("skill:x", ("read",), True, "d", "read x again", grant_scope(ctx), "r1"), ctx
    )
    held = await a.run("first", ctx=ctx)  # read is granted; write asks
    assert [c.name for c in held.pending] == ["write"]
    done = await a.resume("r1", {"c2": True})  # the same task goes on: still granted
    assert done.output == "one"
    decided = [v.verdict for v in seen if v.subject_id == "c1" and v.namespace == "policy"]
    assert decided == ["allow", "allow"]  # at the run, and again when it resumed
    second = await a.run("second")  # a new user message: the grant ended
    (result,) = [m for m in second.transcript[-2:] if m.role == "tool"]
    assert result.is_error and "read x again" in result.text
    assert recorder.state.grants == ()  # the record says it ended
    kinds = [(v.hook, v.verdict) for v in seen if v.hook in ("grant", "revoke")]
    assert kinds == [("grant", "allow"), ("revoke", "revoke")]


async def test_without_a_session_a_grant_lasts_its_run() -> None:
    engine = NameEngine({})
    a = agent([calls("write"), "done"], engine)
    ctx = a.new_context("r1")
    assert grant_scope(ctx) == "run:r1"
    engine.grant(Grant("skill:x", ("write",), True, scope="run:r1", run="r1"))
    assert (await a.run("go", ctx=ctx)).output == "done"
    assert engine.grants("run:r1") == []  # the run is over: forgotten


def test_a_named_scope_wins_over_the_session() -> None:
    ctx = Agent("a", "test").new_context("r1")
    ctx.grant_scope = "conversation-7"
    assert grant_scope(ctx) == "conversation-7"


async def test_a_context_carrying_another_policy_is_refused() -> None:
    a = agent(["ok"])
    ctx = a.new_context()
    ctx.policy = conformance_engine()
    with pytest.raises(ConfigError, match="a run has one policy"):
        await a.run("go", ctx=ctx)


# ----------------------------------------------------------------- lookup


class Loads:
    """A plugin registering an engine loader (reads 'tool: verdict' lines)."""

    name = "names"

    @hookimpl
    def agentkit_register_policy_engines(self, register: Any) -> None:
        def load(path: str) -> NameEngine:
            with open(path, encoding="utf-8") as f:
                pairs = [line.split(":") for line in f.read().splitlines() if line.strip()]
            return NameEngine({k.strip(): v.strip() for k, v in pairs})

        register(self.name, load)


class LoadsToo(Loads):
    name = "other"


def test_load_policy_needs_exactly_one_engine_or_a_name(tmp_path: Any) -> None:
    path = tmp_path / "policy.txt"
    path.write_text("write: deny\n")
    none = PluginManager(entry_points=False)
    with pytest.raises(ConfigError, match=r"no policy engine is installed.*pip install"):
        load_policy(path, manager=none)
    one = PluginManager(entry_points=False, plugins=[Loads()])
    engine = load_policy(path, manager=one)
    assert engine.would(ToolCall("c", "write", "{}")).kind == "deny"
    two = PluginManager(entry_points=False, plugins=[Loads(), LoadsToo()])
    with pytest.raises(ConfigError, match=r"2 are: names, other.*policy_engine="):
        load_policy(path, manager=two)
    assert isinstance(load_policy(path, engine="other", manager=two), NameEngine)
    kit = Kit(model="test", policy=str(path), policy_engine="other", manager=two)
    assert isinstance(kit.policy, NameEngine) and kit.config().policy is kit.policy


def test_resolve_policy_refuses_what_is_not_a_policy(pm) -> None:
    assert resolve_policy(None, manager=pm) is None
    engine = conformance_engine()
    assert resolve_policy(engine, manager=pm) is engine
    with pytest.raises(ConfigError, match=r"policy= takes .* got int 3"):
        resolve_policy(3, manager=pm)  # type: ignore[arg-type]
