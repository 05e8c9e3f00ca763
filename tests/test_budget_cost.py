"""Budgets on cost and tool calls: checked before a call and after it, drawn from the parents."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit_core import Agent
from agentkit_core import Budget
from agentkit_core import BudgetExceeded
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import RunContext
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import Usage
from agentkit_core import hookimpl
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import Price
from agentkit_core.plugin import StoreBridge
from agentkit_core.plugin import cost_of
from agentkit_core.plugin import open_session_store
from agentkit_core.plugin import reset_plugin_manager
from agentkit_core.testing import DictStore
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import tool_call

#: $1 per million input tokens, $2 per million output, cache reads at $0.10.
PRICES = '[prices."shop:model"]\ninput = 1.0\noutput = 2.0\ncache_read = 0.1\n'


@pytest.fixture(autouse=True)
def priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process-wide prices: this file's ``[prices]`` table, no plugin."""
    config = tmp_path / "agentkit.toml"
    config.write_text(PRICES, encoding="utf-8")
    monkeypatch.setenv("AGENTKIT_CONFIG", str(config))
    monkeypatch.setenv("AGENTKIT_LOAD_PLUGINS", "")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def answer(text: str, inp: int, out: int) -> ModelResponse:
    return ModelResponse(Message.assistant(text), Usage(inp, out, 1))


def calling(name: str, call_id: str, arguments: str = "{}") -> ModelResponse:
    call = tool_call(name, arguments, id=call_id)
    return ModelResponse(Message.assistant("", [call]), Usage(1000, 0, 1))


@tool
async def look() -> str:
    """Look."""
    return "seen"


def test_a_price_prices_each_kind_of_token(pm) -> None:
    price = Price(1.0, 2.0, cache_read=0.1, cache_write=1.25, reasoning=3.0)
    usage = Usage(1_000_000, 1_000_000, 1, 200_000, 100_000, 500_000)
    # 700k uncached at 1, 200k read at 0.1, 100k written at 1.25, 500k out at 2, 500k reasoning at 3
    assert price.cost(usage) == pytest.approx(0.7 + 0.02 + 0.125 + 1.0 + 1.5)
    assert cost_of(
        Usage(1_000_000, 500_000, 1, 400_000), "shop:model", manager=pm
    ) == pytest.approx(1.64)
    assert cost_of(Usage(10, 10), "shop:unknown", manager=pm) is None


async def test_a_run_knows_its_cost_and_fails_past_max_cost_after_the_call() -> None:
    model = ScriptedModel([answer("a", 1_000_000, 0)], name="shop:model")
    result = await Agent("x", model, "", hooks=Hooks()).run("go")
    assert result.cost == pytest.approx(1.0) and result.usage_by_model["shop:model"].requests == 1
    model = ScriptedModel([answer("a", 3_000_000, 0)], name="shop:model")
    agent = Agent("x", model, "", hooks=Hooks(), budget=Budget(max_cost=2.0))
    with pytest.raises(BudgetExceeded, match=r"cost budget exceeded: spent \$3.0000 of \$2.0000"):
        await agent.run("go")


async def test_a_call_whose_prompt_alone_would_pass_max_cost_is_not_made(pm) -> None:
    model = ScriptedModel(["never"], name="shop:model")
    ctx = make_test_ctx(model, budget=Budget(max_cost=0.000001), manager=pm)
    assert ctx.invoker is not None
    big = ModelRequest((Message.user("word " * 2000),))
    with pytest.raises(BudgetExceeded) as info:
        await ctx.invoker.chat(big)
    assert model.requests == []
    exc = info.value
    assert exc.limit == "cost" and exc.run_id == ctx.run_id
    assert exc.about is not None and "about to call shop:model" in exc.about
    assert "estimated at $" in str(exc)


async def test_a_model_without_a_price_cannot_be_held_to_max_cost(pm) -> None:
    model = ScriptedModel(["never"], name="other:model")
    ctx = make_test_ctx(model, budget=Budget(max_cost=5.0), manager=pm)
    assert ctx.invoker is not None
    with pytest.raises(
        BudgetExceeded, match=r"whose price is unknown.*\[prices\.\"other:model\"\]"
    ):
        await ctx.invoker.chat(ModelRequest((Message.user("hi"),)))
    assert model.requests == []


async def test_tool_calls_are_counted_before_each_and_refused_past_the_limit() -> None:
    model = ScriptedModel([calling("look", "c1"), calling("look", "c2"), "never"])
    agent = Agent("x", model, "", [look], hooks=Hooks(), budget=Budget(max_tool_calls=1))
    with pytest.raises(BudgetExceeded) as info:
        await agent.run("go")
    exc = info.value
    assert exc.limit == "tool call" and exc.used == "made 1 of 1"
    assert "about to call tool 'look'" in str(exc)


def family(budget: Budget | None = None) -> Agent:
    """A parent that delegates once to a child that looks once, every call priced."""
    child_model = ScriptedModel(
        [calling("look", "k1"), answer("child done", 1_000_000, 0)], name="shop:model"
    )
    child = Agent("helper", child_model, "Help.", [look], hooks=Hooks())
    parent_model = ScriptedModel(
        [calling("helper", "d1", '{"task": "t"}'), answer("done", 0, 0)], name="shop:model"
    )
    config = Kit(model=parent_model, agents=[child]).config()
    return Agent.from_config(config, hooks=Hooks(), budget=budget)


async def test_a_child_agent_draws_cost_and_tool_calls_from_its_parent() -> None:
    result = await family().run("go")
    assert result.output == "done"
    # the parent's delegation (1000 in), the child's look (1000 in) and answer (1M in)
    assert result.cost == pytest.approx(1.0 + 2000 / 1e6)
    with pytest.raises(BudgetExceeded, match="tool call budget exceeded: made 1 of 1"):
        await family(Budget(max_tool_calls=1)).run("go")  # delegating was the first
    with pytest.raises(BudgetExceeded, match="cost budget exceeded") as info:
        await family(Budget(max_cost=0.5)).run("go")
    assert info.value.limit == "cost"


def test_the_new_limits_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"Budget\(max_cost=-1\)"):
        Budget(max_cost=-1)
    with pytest.raises(ConfigError, match=r"Budget\(max_tool_calls=1.5\)"):
        Budget(max_tool_calls=1.5)  # type: ignore[arg-type]


def test_a_bad_price_in_the_config_names_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pm
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[prices."shop:model"]\ninput = 1.0\n', encoding="utf-8")
    monkeypatch.setenv("AGENTKIT_CONFIG", str(config))
    reset_plugin_manager()
    with pytest.raises(ConfigError, match=r'\[prices."shop:model"\] takes input and output'):
        cost_of(Usage(1, 1), "shop:model", manager=pm)


async def test_the_token_limit_names_the_limit_what_was_used_and_after_what() -> None:
    model = ScriptedModel([answer("a", 900, 200)], name="shop:model")
    ctx = make_test_ctx(model, budget=Budget(max_tokens=1000))
    assert ctx.invoker is not None
    with pytest.raises(BudgetExceeded, match="token budget exceeded: used 1100 of 1000") as info:
        await ctx.invoker.chat(ModelRequest((Message.user("hi"),)))
    exc = info.value
    assert (exc.limit, exc.used, exc.about) == (
        "token",
        "used 1100 of 1000",
        "after a call to shop:model",
    )


class AskFirst:
    """Holds every call of ``look`` for a person's approval."""

    AGENTKIT_NAME = "ask-first"

    @hookimpl
    def agentkit_before_tool_call(self, ctx: object, call: ToolCall) -> ToolDecision | None:
        return ToolDecision.ask("a person approves looks") if call.name == "look" else None


def asking(cp: StoreBridge, *steps: ModelResponse | str, budget: Budget | None = None) -> Agent:
    hooks = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[AskFirst()]))
    model = ScriptedModel(list(steps), name="shop:model")
    return Agent("x", model, "", [look], hooks=hooks, checkpointer=cp, budget=budget)


async def test_a_resumed_run_costs_both_parts_and_its_budget_spans_them() -> None:
    cp = StoreBridge(DictStore())  # one store, as two processes would share
    first = await asking(cp, calling("look", "c1")).run("go")
    assert first.status == "suspended" and first.cost == pytest.approx(0.001)
    # a fresh agent (a new process) goes on counting from the checkpoint
    result = await asking(cp, answer("done", 1_000_000, 0)).resume(first.run_id, ["c1"])
    assert result.status == "done" and result.cost == pytest.approx(1.001)
    assert result.usage.requests == 2 and result.usage_by_model["shop:model"].requests == 2
    # $0.001 before the suspension, $1 after: $1.0005 would have been kept only by suspending
    budget = Budget(max_cost=1.0005)
    first = await asking(cp, calling("look", "c1"), budget=budget).run("go")
    resumed = asking(cp, answer("done", 1_000_000, 0), budget=budget)
    with pytest.raises(BudgetExceeded, match=r"spent \$1.0010 of \$1.0005") as info:
        await resumed.resume(first.run_id, ["c1"])
    assert info.value.limit == "cost" and info.value.run_id == first.run_id


async def test_a_run_at_its_request_limit_makes_no_further_call() -> None:
    model = ScriptedModel([answer("a", 1, 1), "never"], name="shop:model")
    ctx = make_test_ctx(model, budget=Budget(max_requests=1))
    assert ctx.invoker is not None
    await ctx.invoker.chat(ModelRequest((Message.user("hi"),)))
    with pytest.raises(BudgetExceeded) as info:
        await ctx.invoker.chat(ModelRequest((Message.user("again"),)))
    assert len(model.requests) == 1  # the second call was not made
    exc = info.value
    assert (exc.limit, exc.used, exc.about) == (
        "request",
        "made 1 of 1 model calls",
        "about to make model call 2",
    )
    assert exc.run_id == ctx.run_id


async def test_a_prompt_that_alone_passes_what_is_left_of_max_tokens_is_not_sent() -> None:
    model = ScriptedModel(["never"], name="shop:model")
    ctx = make_test_ctx(model, budget=Budget(max_tokens=100))
    assert ctx.invoker is not None
    with pytest.raises(BudgetExceeded, match="token budget exceeded: used 0 of 100") as info:
        await ctx.invoker.chat(ModelRequest((Message.user("word " * 2000),)))
    assert model.requests == []
    exc = info.value
    assert exc.limit == "token" and exc.about is not None
    assert exc.about.startswith("about to send a prompt estimated at ")


async def test_a_run_resumed_from_its_session_costs_both_parts(
    monkeypatch: pytest.MonkeyPatch,
    pm,
) -> None:
    monkeypatch.delenv("AGENTKIT_LOAD_PLUGINS")  # the session store's plugin; the prices stay
    reset_plugin_manager()
    async with Sessions(await open_session_store("memory://", manager=pm)) as sessions:
        recorder = await Recorder.start(sessions, {"model": "shop:model"})
        hooks = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[AskFirst()]))

        def agent(step: ModelResponse, on: Recorder) -> Agent:
            model = ScriptedModel([step], name="shop:model")
            return Agent("x", model, "", [look], hooks=hooks, recorder=on)

        first = await agent(calling("look", "c1"), recorder).run("go")
        assert first.status == "suspended"
        # a new process: the session's leaf is all it has
        again = await Recorder.resume(sessions, recorder.session_id)
        result = await agent(answer("done", 1_000_000, 0), again).resume(first.run_id, ["c1"])
    assert result.status == "done" and result.cost == pytest.approx(1.001)
    assert result.usage.requests == 2 and result.usage_by_model["shop:model"].requests == 2


class HouseRates:
    """A price source only the manager it is given to knows: $4/$8 per million for house:model."""

    AGENTKIT_NAME = "house-rates"

    @hookimpl
    def agentkit_register_prices(self, register: Callable[[str, object], None]) -> None:
        register("house", lambda model: Price(4.0, 8.0) if model == "house:model" else None)


async def test_a_run_is_priced_on_its_agents_manager_not_the_process_wide_one(
    monkeypatch: pytest.MonkeyPatch, pm
) -> None:
    monkeypatch.delenv("AGENTKIT_LOAD_PLUGINS")  # the session store's plugin
    house = PluginManager(plugins=[HouseRates()])
    assert cost_of(Usage(1, 1), "house:model", manager=pm) is None  # the others do not know it
    async with Sessions(await open_session_store("memory://", manager=pm)) as sessions:
        recorder = await Recorder.start(sessions, {"model": "house:model"})
        model = ScriptedModel([answer("a", 1_000_000, 0)], name="house:model")
        agent = Agent("x", model, "", hooks=Hooks(), recorder=recorder, manager=house)
        result = await agent.run("go")  # metering prices it
        items = await sessions.path(recorder.session_id)
    assert result.cost == pytest.approx(4.0)
    assert [i.body.get("cost") for i in items if i.kind == "response"] == [pytest.approx(4.0)]
    # the cost limit's estimate before a call, and a child run's prices: its parent's
    ctx = make_test_ctx(
        ScriptedModel(["never"], name="house:model"), budget=Budget(max_cost=1e-6), manager=house
    )
    child = RunContext(parent=ctx, model=ScriptedModel(["never"], name="house:model"))
    assert child.manager is house and child.invoker is not None
    with pytest.raises(BudgetExceeded, match=r"estimated at \$"):
        await child.invoker.chat(ModelRequest((Message.user("word " * 100),)))


async def test_a_run_built_by_hand_has_no_prices_until_an_agent_runs_it() -> None:
    house = PluginManager(plugins=[HouseRates()])
    ctx = make_test_ctx(ScriptedModel([answer("a", 1_000_000, 0)], name="house:model"))
    assert ctx.manager is None and ctx.invoker is not None
    await ctx.invoker.chat(ModelRequest((Message.user("hi"),)))
    assert ctx.cost is None and ctx.unpriced == {"house:model"}  # unknown, never a guess
    mine = RunContext()
    model = ScriptedModel([answer("a", 1_000_000, 0)], name="house:model")
    result = await Agent("x", model, "", hooks=Hooks(), manager=house).run("go", ctx=mine)
    assert mine.manager is house and result.cost == pytest.approx(4.0)
