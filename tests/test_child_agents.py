"""A child agent (Kit(agents=[...]), agent_tool) is bound to the run that calls it: its run is a
child span of the parent's tool call, it draws from the parent's budget, checkpoints through the
parent's checkpointer under its own namespace, asks through the parent's elicitor, and records a
linked child session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Budget
from agentkit_core import BudgetExceeded
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolDecision
from agentkit_core import ToolUnion
from agentkit_core import Usage
from agentkit_core import agent_tool
from agentkit_core import hookimpl
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import PolicyEngine
from agentkit_core.plugin import Span
from agentkit_core.plugin import SpanExporter
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import open_checkpoint_store
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call


class Collect(SpanExporter):
    def __init__(self) -> None:
        self.ended: list[Span] = []

    def on_end(self, span: Span) -> None:
        self.ended.append(span)


def delegate(task: str = "dig", call_id: str = "c1", to: str = "helper") -> Message:
    return Message.assistant("", [tool_call(to, f'{{"task": "{task}"}}', id=call_id)])


def answer(text: str, tokens: int) -> ModelResponse:
    """An answer that cost ``tokens`` output tokens."""
    return ModelResponse(Message.assistant(text), Usage(0, tokens, 1))


def free(message: Message) -> ModelResponse:
    """``message`` at no cost."""
    return ModelResponse(message, Usage(0, 0, 1))


def calling(name: str, tokens: int, call_id: str) -> ModelResponse:
    return ModelResponse(
        Message.assistant("", [tool_call(name, "{}", id=call_id)]), Usage(0, tokens, 1)
    )


@tool
def look() -> str:
    """Look around."""
    return "seen"


def parent_of(child: Agent, model: ScriptedModel, **options: Any) -> Agent:
    config = Kit(model=model, agents=[child]).config()
    return Agent.from_config(config, hooks=Hooks(), **options)


# ----------------------------------------------------------------- the trace


async def test_the_childs_run_is_a_child_span_of_the_parents_tool_call() -> None:
    child = Agent("helper", ScriptedModel(["found it"]), "Help.", hooks=Hooks(), exporters=[])
    collect = Collect()
    parent = parent_of(child, ScriptedModel([delegate(), "done"]), exporters=[collect])
    result = await parent.run("go")
    assert result.output == "done"
    by_id = {s.span_id: s for s in collect.ended}
    runs = [s for s in collect.ended if s.name == "run"]
    assert len(runs) == 2  # the parent's exporter hears the child's run too
    child_run = next(s for s in runs if s.attributes["agent"] == "helper")
    call = by_id[child_run.parent_id]  # type: ignore[index]
    assert (call.name, call.attributes["call_id"]) == ("tool_call", "c1")
    parent_run = next(s for s in runs if s.attributes["agent"] != "helper")
    assert child_run.run_id != parent_run.run_id
    # the child's model call nests in the child's run, under the parent's tool call
    child_calls = [
        s for s in collect.ended if s.name == "model_call" and s.run_id == child_run.run_id
    ]
    assert child_calls and all(_under(s, child_run, by_id) for s in child_calls)


def _under(span: Span, ancestor: Span, by_id: dict[str, Span]) -> bool:
    while span.parent_id is not None and span.parent_id in by_id:
        span = by_id[span.parent_id]
        if span is ancestor:
            return True
    return False


# ----------------------------------------------------------------- the budget


async def test_a_child_cannot_spend_past_the_parents_limit(pm) -> None:
    child_model = ScriptedModel(
        [calling("look", 40, "k1"), calling("look", 40, "k2"), answer("never", 40)]
    )
    child = Agent("helper", child_model, "Help.", [look], hooks=Hooks())
    parent_model = ScriptedModel([ModelResponse(delegate(), Usage(0, 10, 1)), answer("x", 1)])
    store = await open_checkpoint_store("memory://", manager=pm)
    # 80: what is left after the child's first call is more than its second prompt
    parent = parent_of(child, parent_model, budget=Budget(max_tokens=80), checkpointer=store)
    ctx = parent.new_context()
    with pytest.raises(BudgetExceeded, match="used 90 of 80"):
        await parent.run("go", ctx=ctx)
    assert len(child_model.requests) == 2  # the call that crossed the limit was the last
    assert len(parent_model.requests) == 1  # the parent made no call after its child's
    assert ctx.usage.total_tokens == 90  # the child's spending is the parent's
    saved = await parent.checkpointer.resume(ctx.run_id, include_terminal=True)  # type: ignore[union-attr]
    assert saved is not None and saved.status == "failed"


async def test_a_childs_own_tighter_limit_is_the_childs_failure_not_the_parents() -> None:
    child_model = ScriptedModel([calling("look", 5, "k1"), answer("never", 5)])
    child = Agent(
        "helper", child_model, "Help.", [look], hooks=Hooks(), budget=Budget(max_requests=1)
    )
    parent = parent_of(child, ScriptedModel([delegate(), "carried on"]))
    result = await parent.run("go")
    assert result.output == "carried on"
    failed = next(m for m in result.transcript if m.role == "tool")
    assert failed.is_error and "helper ran out of its own budget" in failed.content
    assert "request budget exceeded: made 1 of 1 model calls, about to make model call 2" in (
        failed.content
    )
    assert result.usage.requests == 2 + 1  # the child's call is counted in the parent


async def test_a_tools_own_model_call_past_the_budget_fails_the_run() -> None:
    """BudgetExceeded is no tool error: a tool that spends past the run's budget ends the run."""
    summarizer = ScriptedModel([answer("summary", 50)])

    @tool
    async def summarize(ctx: RunContext) -> str:
        """Summarize through another model, on this run's budget."""
        request = ModelRequest((Message.user("summarize"),), ())
        return (await ctx.invoker_for(summarizer).chat(request)).message.text

    model = ScriptedModel([calling("summarize", 1, "s1"), "never"])
    agent = Agent("a", model, "", [summarize], hooks=Hooks(), budget=Budget(max_tokens=20))
    with pytest.raises(BudgetExceeded, match="used 51 of 20"):
        await agent.run("go")
    assert len(model.requests) == 1


@settings(max_examples=40, deadline=None)
@given(
    limit=st.integers(1, 300),
    parent_first=st.integers(0, 60),
    child_costs=st.lists(st.integers(1, 60), min_size=1, max_size=5),
    child_limit=st.none() | st.integers(1, 300),
)
def test_spending_stops_at_the_first_call_past_either_limit(
    limit: int, parent_first: int, child_costs: list[int], child_limit: int | None
) -> None:
    """The parent spends first, then its child calls ``look`` until its last answer; every
    call's tokens count against both limits, and every prompt is estimated (by core's own
    estimator) before it is sent. The run ends at the first call that passes the parent's
    limit, or whose prompt alone would (the parent's failure), or the child's own (the
    child's, a tool error). The prompts' estimates are read from a run of the same script
    without limits."""

    def build(limited: bool) -> tuple[Agent, ScriptedModel, ScriptedModel]:
        steps: list[Any] = [calling("look", c, f"k{i}") for i, c in enumerate(child_costs[:-1])]
        steps.append(answer("child done", child_costs[-1]))
        child_model = ScriptedModel(steps)
        child = Agent(
            "helper",
            child_model,
            "Help.",
            [look],
            hooks=Hooks(),
            budget=Budget(max_tokens=child_limit if limited else None),
            max_turns=10,
        )
        parent_model = ScriptedModel(
            [ModelResponse(delegate(), Usage(0, parent_first, 1)), answer("done", 0)]
        )
        budget = Budget(max_tokens=limit if limited else None)
        return parent_of(child, parent_model, budget=budget), parent_model, child_model

    async def run(parent: Agent) -> str:
        try:
            result = await parent.run("go")
        except BudgetExceeded:
            return "parent"
        tool_result = next(m for m in result.transcript if m.role == "tool")
        return "child" if "ran out of its own budget" in str(tool_result.content) else "done"

    free_run, free_parent, free_child = build(limited=False)
    asyncio.run(run(free_run))
    parent_prompts = [estimate_tokens(r.messages) for r in free_parent.requests]
    child_prompts = [estimate_tokens(r.messages) for r in free_child.requests]

    spent = child_spent = 0
    expected_child_calls, outcome = len(child_costs), "done"
    if parent_prompts[0] > limit or parent_first > limit:
        expected_child_calls, outcome = 0, "parent"
    else:
        spent = parent_first
        for i, (cost, prompt) in enumerate(zip(child_costs, child_prompts, strict=True)):
            if prompt > limit - spent:
                expected_child_calls, outcome = i, "parent"
                break
            if child_limit is not None and prompt > child_limit - child_spent:
                expected_child_calls, outcome = i, "child"
                break
            spent += cost
            child_spent += cost
            if spent > limit:
                expected_child_calls, outcome = i + 1, "parent"
                break
            if child_limit is not None and child_spent > child_limit:
                expected_child_calls, outcome = i + 1, "child"
                break
        if outcome == "done" and parent_prompts[1] > limit - spent:  # the parent's next call
            outcome = "parent"

    parent, parent_model, child_model = build(limited=True)
    got = asyncio.run(run(parent))
    assert len(child_model.requests) == expected_child_calls
    if outcome == "child":
        # the parent's next prompt holds the child's failure, not its answer: it was sent when
        # what it is estimated at fits what is left, and refused (the parent's failure) when not
        assert got in ("child", "parent")
        assert (got == "child") == (len(parent_model.requests) == 2)
        if got == "child":
            assert estimate_tokens(parent_model.requests[1].messages) <= limit - spent
    else:
        assert got == outcome


# ----------------------------------------------------------------- checkpoints and elicitor


async def test_the_child_checkpoints_through_the_parents_checkpointer_under_its_namespace(
    pm,
) -> None:
    child = Agent("helper", ScriptedModel([calling("look", 1, "k1"), "found"]), "Help.", [look])
    store = await open_checkpoint_store("memory://", manager=pm)
    collect = Collect()
    parent = parent_of(
        child, ScriptedModel([delegate(), "done"]), checkpointer=store, exporters=[collect]
    )
    ctx = parent.new_context()
    result = await parent.run("go", ctx=ctx)
    assert result.output == "done"
    [child_run_id] = {
        s.run_id for s in collect.ended if s.name == "run" and s.attributes["agent"] == "helper"
    }
    checkpointer = parent.checkpointer
    assert checkpointer is not None
    own = await checkpointer.resume(ctx.run_id, include_terminal=True)
    assert own is not None and own.status == "done" and own.namespace == "agent"
    namespace = f"agent/helper:{child_run_id}"
    saved = await checkpointer.resume(ctx.run_id, namespace=namespace, include_terminal=True)
    assert saved is not None and saved.status == "done"
    assert saved.metadata == {"agent": "helper", "run_id": child_run_id}
    assert saved.state["transcript"][-1].text == "found"
    # the child's batch marked in flight, the turn after it, its answer
    assert await checkpointer.list_versions(ctx.run_id, namespace=namespace) == [1, 2, 3]
    assert await checkpointer.list_versions(child_run_id) == []  # nothing under its own id


class AskAll(PolicyEngine):
    """Asks a person about every call."""

    name = "ask-all"

    def evaluate(self, call: Any, source: Any, grants: Any) -> ToolDecision:
        return ToolDecision("ask", "a person decides", rule="ask-everything")

    def removes(self, name: str, source: str) -> bool:
        return False

    def compile_grant(self, grant: Any) -> Any:
        return None, (), ()


class StopAtOnce:
    @hookimpl
    def agentkit_should_stop_after_turn(self, ctx: Any, turn: Any) -> str:
        return "one turn is enough"


async def test_a_child_held_for_approval_is_the_calls_error_and_runs_nothing() -> None:
    ran: list[str] = []

    @tool
    def wipe() -> str:
        """Wipe the disk."""
        ran.append("wipe")
        return "wiped"

    model = ScriptedModel([calling("wipe", 1, "k1")])
    child = Agent("helper", model, "", [wipe], policy=AskAll())
    parent = parent_of(child, ScriptedModel([delegate(), "done"]))
    result = await parent.run("go")
    said = next(m for m in result.transcript if m.role == "tool")
    assert said.is_error and said.text.startswith("helper did not answer: its run '")
    assert said.text.endswith(
        "holds 'wipe' (k1) for a person's approval (ask-all: a person decides), which a call of "
        "it as a tool cannot give; nothing it holds ran"
    )
    assert (result.status, ran) == ("done", [])


async def test_a_child_stopped_before_answering_is_the_calls_error() -> None:
    hooks = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[StopAtOnce()]))
    child = Agent("helper", ScriptedModel([calling("look", 1, "k1")]), "", [look], hooks=hooks)
    parent = parent_of(child, ScriptedModel([delegate(), "done"]))
    said = next(m for m in (await parent.run("go")).transcript if m.role == "tool")
    assert said.is_error
    assert said.text.startswith("helper stopped before answering: ")
    assert said.text.endswith("one turn is enough")


async def test_the_child_asks_through_the_parents_elicitor() -> None:
    asked: list[str] = []

    async def person(question: str, schema: Any, secret: bool) -> str:
        asked.append(question)
        return "Ada"

    @tool
    async def whom(ctx: RunContext) -> str:
        """Ask whom to greet."""
        return f"hello {await ctx.elicit('Whom shall I greet?')}"

    child = Agent("helper", ScriptedModel([calling("whom", 1, "k1"), "greeted"]), "", [whom])
    parent = parent_of(child, ScriptedModel([delegate(), "done"]), elicitor=person)
    result = await parent.run("go")
    assert result.output == "done" and asked == ["Whom shall I greet?"]


async def test_a_secret_the_child_was_told_taints_the_parent(pm) -> None:
    async def person(question: str, schema: Any, secret: bool) -> str:
        return "hunter2"

    @tool
    async def password(ctx: RunContext) -> str:
        """Ask for the password."""
        await ctx.elicit("Password?", secret=True)
        return "logged in"

    child = Agent("helper", ScriptedModel([calling("password", 1, "k1"), "in"]), "", [password])
    store = await open_checkpoint_store("memory://", manager=pm)
    parent = parent_of(
        child, ScriptedModel([delegate(), "done"]), elicitor=person, checkpointer=store
    )
    ctx = parent.new_context()
    assert (await parent.run("go", ctx=ctx)).output == "done"
    assert ctx.secret_tainted
    # the parent's in-flight mark is written before the call (the secret not yet told);
    # every checkpoint after it is only the marker of a tainted run
    saved = await store.latest(ctx.run_id, "agent")
    assert await store.versions(ctx.run_id, "agent") == [1, 2]
    assert saved is not None and (saved.status, saved.state) == ("tainted", "null")
    first = await store.get(ctx.run_id, "agent", 1)
    assert first is not None and "hunter2" not in str(first.state)


# ----------------------------------------------------------------- nesting


async def test_a_grandchild_writes_under_the_root_run_and_spends_from_every_ancestor(pm) -> None:
    leaf_model = ScriptedModel([answer("leaf done", 30)])
    leaf = Agent("leaf", leaf_model, "", hooks=Hooks())
    mid_config = Kit(model=ScriptedModel([delegate(to="leaf"), "mid done"]), agents=[leaf])
    mid = Agent.from_config(mid_config.config(), name="mid", hooks=Hooks())
    store = await open_checkpoint_store("memory://", manager=pm)
    collect = Collect()
    root = parent_of(
        mid,
        ScriptedModel([delegate(to="mid"), answer("root done", 0)]),
        checkpointer=store,
        exporters=[collect],
        budget=Budget(max_tokens=1000),
    )
    ctx = root.new_context()
    result = await root.run("go", ctx=ctx)
    assert result.output == "root done"
    ids = {s.attributes["agent"]: s.run_id for s in collect.ended if s.name == "run"}
    assert set(ids) == {"agent", "mid", "leaf"}
    assert ctx.usage.total_tokens >= 30  # the leaf's spending reached the root
    checkpointer = root.checkpointer
    assert checkpointer is not None
    namespace = f"agent/mid:{ids['mid']}/leaf:{ids['leaf']}"
    saved = await checkpointer.resume(ctx.run_id, namespace=namespace, include_terminal=True)
    assert saved is not None and saved.status == "done"
    assert saved.metadata == {"agent": "leaf", "run_id": ids["leaf"]}


async def test_a_child_given_its_own_exporters_tells_them_too() -> None:
    own = Collect()
    child = Agent("helper", ScriptedModel(["found"]), "", hooks=Hooks(), exporters=[own])
    parents = Collect()
    parent = parent_of(child, ScriptedModel([delegate(), "done"]), exporters=[parents])
    await parent.run("go")
    child_runs = [s for s in parents.ended if s.name == "run" and s.attributes["agent"] == "helper"]
    assert [s.span_id for s in own.ended if s.name == "run"] == [child_runs[0].span_id]


# ----------------------------------------------------------------- depth, and every level's limits


def levels(ctx: RunContext) -> int:
    """How many runs are above ``ctx``'s."""
    return 0 if ctx.parent is None else 1 + levels(ctx.parent)


def network(
    successors: list[int | None], limits: list[int | None] | None = None, **options: Any
) -> tuple[list[Agent], list[tuple[str, int]], list[tuple[str, str]]]:
    """Agents ``a0``, ``a1``... where ``a<i>`` hands every task to ``a<successors[i]>`` (or,
    with None, answers it) and answers once its child has; ``a<i>`` runs under
    ``Budget(max_depth=limits[i])``. Returns the agents, each run's ``(agent, depth)`` as its
    model is first asked, and each ``(agent, tool result)`` a model read."""
    runs: list[tuple[str, int]] = []
    results: list[tuple[str, str]] = []
    unions = [ToolUnion([]) for _ in successors]
    agents = []
    for i, successor in enumerate(successors):
        name = f"a{i}"

        def step(request: ModelRequest, name: str = name, successor: int | None = successor) -> Any:
            last = request.messages[-1]
            if last.role == "tool":
                results.append((name, last.text))
                return f"{name} done"
            assert request.ctx is not None
            runs.append((name, levels(request.ctx)))
            return "leaf" if successor is None else delegate(to=f"a{successor}")

        budget = Budget() if limits is None else Budget(max_depth=limits[i])
        model = ScriptedModel([step] * 50)
        agents.append(Agent(name, model, "", unions[i], hooks=Hooks(), budget=budget, **options))
    for union, successor in zip(unions, successors, strict=True):
        if successor is not None:
            union.add("child", [agent_tool(agents[successor])])
    return agents, runs, results


async def test_an_agent_offered_to_itself_stops_at_the_default_depth() -> None:
    """Nested without end before (200,000 runs); now the root's budget allows 5 levels."""
    [a], runs, _ = network([0], max_turns=2)
    ctx = a.new_context()
    with pytest.raises(BudgetExceeded) as caught:
        await a.run("go", ctx=ctx)
    assert Budget().max_depth == 5  # docs/kit.md says so
    assert runs == [("a0", depth) for depth in range(6)]  # the root and five levels below
    message = str(caught.value)
    assert f": {' -> '.join(['a0'] * 7)};" in message
    assert "child agent 'a0' would nest 6 deep below 'a0'" in message
    assert f"(run {ctx.run_id}), past its Budget(max_depth=5)" in message
    assert caught.value.run_id == ctx.run_id  # the root's limit: the root's run fails


async def test_the_chain_names_each_agent_on_the_way_down() -> None:
    agents, runs, _ = network([1, 2, 0], [2, None, None])
    with pytest.raises(BudgetExceeded, match=r": a0 -> a1 -> a2 -> a0; "):
        await agents[0].run("go")
    assert runs == [("a0", 0), ("a1", 1), ("a2", 2)]


async def test_a_limit_in_the_middle_fails_that_child_and_its_caller_carries_on() -> None:
    agents, runs, results = network([1, 2, None], [None, 0, None])
    result = await agents[0].run("go")
    assert result.output == "a0 done"
    assert runs == [("a0", 0), ("a1", 1)]  # a2 never ran
    [(reader, text)] = results
    assert reader == "a0" and text.startswith("a1 ran out of its own budget: child agent 'a2'")
    assert ": a0 -> a1 -> a2;" in text


async def test_max_depth_none_lifts_the_limit() -> None:
    def step(request: ModelRequest) -> Any:
        assert request.ctx is not None
        if request.messages[-1].role == "tool":
            return "up"
        return "bottom" if levels(request.ctx) == 8 else delegate(to="deep")

    union = ToolUnion([])
    unlimited = Budget(max_depth=None)
    deep = Agent("deep", ScriptedModel([step] * 20), "", union, hooks=Hooks(), budget=unlimited)
    union.add("self", [agent_tool(deep)])
    assert (await deep.run("go")).output == "up"


@pytest.mark.parametrize("bad", [-1, True, 2.5, "3"])
def test_max_depth_must_be_a_whole_number_of_levels(bad: Any) -> None:
    with pytest.raises(ConfigError, match=rf"Budget\(max_depth={bad!r}\) must be a whole number"):
        Budget(max_depth=bad)


@settings(max_examples=60, deadline=None)
@given(
    graph=st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.lists(st.none() | st.integers(0, n - 1), min_size=n, max_size=n),
            st.integers(0, 4),
            st.lists(st.none() | st.integers(0, 4), min_size=n - 1, max_size=n - 1),
        )
    )
)
def test_nesting_never_passes_a_limit_and_the_error_names_the_chain(
    graph: tuple[list[int | None], int, list[int | None]],
) -> None:
    """Random agent graphs (cycles included) and limits: the runs follow the graph down until a
    child would pass the limit of a run above it; the outermost such run fails, naming the
    chain from the root to the refused child."""
    successors, root_limit, limits = graph
    limits = [root_limit, *limits]
    path = [0]  # the agents of the runs, root first; then who is refused, and whose limit
    refused: tuple[int, int] | None = None
    while (child := successors[path[-1]]) is not None:
        depth = len(path)
        over = [i for i, a in enumerate(path) if (m := limits[a]) is not None and depth - i > m]
        if over:
            refused = (child, over[0])
            break
        path.append(child)

    agents, runs, results = network(successors, limits)
    ctx = agents[0].new_context()

    async def run() -> BudgetExceeded | None:
        try:
            await agents[0].run("go", ctx=ctx)
        except BudgetExceeded as exc:
            return exc
        return None

    error = asyncio.run(run())
    assert runs == [(f"a{a}", depth) for depth, a in enumerate(path)]
    if refused is None:
        assert error is None
        return
    child, owner = refused
    chain = " -> ".join(f"a{a}" for a in [*path, child])
    if owner == 0:
        assert error is not None and error.run_id == ctx.run_id
        assert f": {chain};" in str(error)
    else:  # the owner's run failed; its caller's model read why, and every run then ended
        assert error is None
        caller, failed = f"a{path[owner - 1]}", f"a{path[owner]}"
        reason = f"{failed} ran out of its own budget: child agent 'a{child}'"
        assert any(r == caller and t.startswith(reason) and f": {chain};" in t for r, t in results)


async def test_a_grandchilds_spending_past_the_roots_budget_fails_the_root() -> None:
    leaf = Agent("leaf", ScriptedModel([answer("never mind", 100)]), "", hooks=Hooks())
    mid = Agent.from_config(
        Kit(model=ScriptedModel([free(delegate(to="leaf")), "mid done"]), agents=[leaf]).config(),
        name="mid",
        hooks=Hooks(),
    )
    root_model = ScriptedModel([ModelResponse(delegate(to="mid"), Usage(0, 10, 1)), "never"])
    root = parent_of(mid, root_model, budget=Budget(max_tokens=50))
    ctx = root.new_context()
    with pytest.raises(BudgetExceeded, match="used 110 of 50") as caught:
        await root.run("go", ctx=ctx)
    assert caught.value.run_id == ctx.run_id
    assert len(root_model.requests) == 1  # the root asked its model nothing after
    assert ctx.usage.total_tokens == 110


def hanging(cancelled: asyncio.Event) -> Tool:
    """A tool ``hang`` that waits for ever; ``cancelled`` is set when it is cancelled."""

    @tool
    async def hang() -> str:
        """Wait for ever."""
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return "never"

    return hang


async def test_an_ancestors_tool_timeout_stops_a_grandchild() -> None:
    """The child's whole run is one tool call of the root: the root's timeout ends the
    grandchild's tool, although neither the child nor the grandchild has a timeout."""
    cancelled = asyncio.Event()
    leaf_model = ScriptedModel([calling("hang", 1, "h1")])
    leaf = Agent("leaf", leaf_model, "", [hanging(cancelled)], hooks=Hooks(), tool_timeout=None)
    mid = Agent.from_config(
        Kit(model=ScriptedModel([delegate(to="leaf")]), agents=[leaf]).config(),
        name="mid",
        hooks=Hooks(),
        tool_timeout=None,
    )
    root = parent_of(mid, ScriptedModel([delegate(to="mid"), "gave up"]), tool_timeout=0.2)
    result = await asyncio.wait_for(root.run("go"), 10)
    assert result.output == "gave up"
    assert cancelled.is_set()
    failed = next(m for m in result.transcript if m.role == "tool")
    assert failed.is_error and failed.text == "tool 'mid' timed out after 0.2 s"


async def test_agent_tool_timeout_bounds_the_childs_whole_run() -> None:
    cancelled = asyncio.Event()
    child_model = ScriptedModel([calling("hang", 1, "h1")])
    child = Agent("slow", child_model, "", [hanging(cancelled)], hooks=Hooks(), tool_timeout=None)
    parent = Agent(
        "p",
        ScriptedModel([delegate(to="slow"), "ok"]),
        "",
        [agent_tool(child, timeout=0.1)],
        hooks=Hooks(),
        tool_timeout=None,
    )
    result = await asyncio.wait_for(parent.run("go"), 10)
    failed = next(m for m in result.transcript if m.role == "tool")
    assert failed.text == "tool 'slow' timed out after 0.1 s" and cancelled.is_set()
