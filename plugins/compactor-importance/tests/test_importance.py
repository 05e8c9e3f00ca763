import json
from collections.abc import Callable
from collections.abc import Sequence

import agentkit_compactor_importance as plugin
import pytest
from agentkit_compactor_importance import ImportanceFilteringCompactor

from agentkit_core import Agent
from agentkit_core import Budget
from agentkit_core import BudgetExceeded
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ProviderError
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import compaction
from agentkit_core import hookimpl
from agentkit_core.plugin import WorkingContext
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import get_compactor
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import check_compaction_invariants
from agentkit_core.testing import make_test_ctx


def transcript() -> list[Message]:
    """System, then five turns: user, a parallel tool turn, assistant, user, assistant."""
    calls = [
        ToolCall("a", "search", json.dumps({"q": "x" * 200})),
        ToolCall("b", "read", json.dumps({"path": "notes.txt"})),
    ]
    return [
        Message.system("sys"),
        Message.user("my budget is 300 EUR"),
        Message.assistant("", calls),
        Message.tool("a", "flights: 280 EUR", name="search"),
        Message.tool("b", "notes", name="read"),
        Message.assistant("nice weather today"),
        Message.user("book the cheapest"),
        Message.assistant("booked flight 280 EUR"),
    ]


def compactor(**kwargs: object) -> ImportanceFilteringCompactor:
    return ImportanceFilteringCompactor(max_tokens=50, **kwargs)  # type: ignore[arg-type]


def skipped(ctx: RunContext) -> str:
    (span,) = ctx.trace.find("compaction")
    return str(span.attributes["compaction_skipped"])


async def test_keeps_what_the_model_names_plus_system_and_newest_and_meters_it() -> None:
    msgs = transcript()
    model = ScriptedModel(["[1, 2]"])
    ctx = make_test_ctx(model)
    out = await compactor().compact(msgs, ctx)
    check_compaction_invariants(msgs, out)
    # turns 1 and 2 as named, and turn 4, the newest user message, whatever the model named
    assert out == [msgs[0], msgs[1], *msgs[2:5], msgs[6], msgs[7]]
    (request,) = model.requests
    prompt = request.messages[1].text
    assert prompt.startswith("Turn 1:\nuser: my budget is 300 EUR\n\nTurn 2:\nassistant: \n")
    assert "  calls search(" in prompt and "tool read result (b): notes" in prompt
    assert "Turn 4:\nuser: book the cheapest" in prompt and "Turn 5" not in prompt
    assert "booked flight" not in prompt  # the newest turn is always kept, never offered
    (call,) = ctx.trace.find("model_call")
    assert call.parent == "compaction"
    assert ctx.usage.requests == 1 and ctx.usage.input_tokens == estimate_tokens(request.messages)
    (span,) = ctx.trace.find("compaction")
    assert span.attributes["compaction_kept_turns"] == 3
    assert span.attributes["compaction_dropped_turns"] == 1


@pytest.mark.parametrize("answer", ["```json\n[4]\n```", "Keep these: [4].", "[4, 4]", "[]"])
async def test_fenced_prose_repeated_and_empty_answers_parse(answer: str) -> None:
    msgs = transcript()
    out = await compactor().compact(msgs, make_test_ctx(ScriptedModel([answer])))
    assert out == [msgs[0], msgs[6], msgs[7]]  # the newest user message even when unnamed


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("keep them all", "the answer is not a JSON list of turn numbers: 'keep them all'"),
        ('{"keep": [1]}', "the answer is not a JSON list of turn numbers"),
        ('["1"]', "the answer is not a JSON list of turn numbers"),
        ("[true]", "the answer is not a JSON list of turn numbers"),
        ("[0, 2, 9]", r"the answer names turns that do not exist: [0, 9] (turns are 1-4)"),
        (ProviderError("overloaded"), "the filterer failed: ProviderError: overloaded"),
    ],
)
async def test_an_unusable_answer_leaves_the_transcript_whole_and_says_why(
    answer: object, reason: str
) -> None:
    msgs = transcript()
    ctx = make_test_ctx(ScriptedModel([answer]))  # type: ignore[list-item]
    with ctx.trace.span("outer") as outer:
        out = await compactor().compact(msgs, ctx)
    assert out is msgs
    assert skipped(ctx).startswith(reason)
    assert outer.attributes["compaction_skipped"] == skipped(ctx)


async def test_a_filterer_callable_chooses_by_index() -> None:
    seen: list[list[list[Message]]] = []

    async def keep_first(turns: list[list[Message]], ctx: RunContext) -> Sequence[int]:
        seen.append(turns)
        return [0]

    msgs = transcript()
    out = await compactor(filterer=keep_first).compact(msgs, make_test_ctx())
    assert out == [msgs[0], msgs[1], msgs[6], msgs[7]]
    assert seen == [[msgs[1:2], msgs[2:5], msgs[5:6], msgs[6:7]]]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("0", "the filterer returned '0', not a list of turn indices"),
        (None, "the filterer returned None, not a list of turn indices"),
        (
            [4, -1, "x"],
            "the filterer named turns that do not exist: [4, -1, 'x'] (indices are 0-3)",
        ),
    ],
)
async def test_a_filterer_naming_no_real_turns_is_refused(answer: object, reason: str) -> None:
    async def bad(turns: list[list[Message]], ctx: RunContext) -> object:
        return answer

    msgs = transcript()
    ctx = make_test_ctx()
    assert await compactor(filterer=bad).compact(msgs, ctx) is msgs  # type: ignore[arg-type]
    assert skipped(ctx) == reason


async def test_under_the_threshold_or_with_one_turn_nothing_is_asked() -> None:
    msgs = transcript()
    ctx = make_test_ctx(ScriptedModel([]))
    assert await ImportanceFilteringCompactor(max_tokens=10_000).compact(msgs, ctx) is msgs
    assert ctx.trace.spans == []
    big = [Message.system("s"), Message.user("u" * 1000)]
    assert await compactor().compact(big, ctx) is big
    assert skipped(ctx) == "no turn but the newest to choose from"


async def test_model_picks_another_model_behind_the_same_chain() -> None:
    agent_model, chooser = ScriptedModel([]), ScriptedModel(["[4]"], name="chooser")
    ctx = make_test_ctx(agent_model)
    msgs = transcript()
    assert await compactor(model=chooser).compact(msgs, ctx) == [msgs[0], msgs[6], msgs[7]]
    assert agent_model.requests == [] and len(chooser.requests) == 1
    assert ctx.usage.requests == 1
    assert ctx.trace.find("model_call")[0].attributes["model"] == "chooser"


async def test_a_budget_exhausted_by_the_call_is_not_swallowed() -> None:
    ctx = make_test_ctx(ScriptedModel(["[1]"]), budget=Budget(max_requests=0))
    with pytest.raises(BudgetExceeded, match="request budget exceeded"):
        await compactor().compact(transcript(), ctx)


async def test_as_middleware_in_a_run_the_filter_request_is_not_compacted_again() -> None:
    model = ScriptedModel(["[1]", "final answer"])
    agent = Agent(
        model=model, prompt="be brief", hooks=Hooks(), middlewares=[compaction(compactor())]
    )
    history = transcript()[1:]
    ctx = agent.new_context()
    result = await agent.run("and now?", ctx=ctx, wc=WorkingContext(messages=history))
    assert result.output == "final answer"
    filter_request, agent_request = model.requests
    assert filter_request.metadata["compaction"] == "importance"
    assert [m.text for m in agent_request.messages] == ["be brief", history[0].text, "and now?"]
    assert result.usage.requests == 2
    # the compactor's own request passed the middleware untouched: one compaction, not two
    (span,) = ctx.trace.find("compaction")
    assert "compaction_skipped" not in span.attributes
    assert [s.parent for s in ctx.trace.find("model_call")] == ["turn", "compaction"]


def test_bad_options_and_registration() -> None:
    async def f(turns: list[list[Message]], ctx: RunContext) -> list[int]:
        return []

    with pytest.raises(ConfigError, match="both filterer= and model="):
        ImportanceFilteringCompactor(f, model=ScriptedModel([]))
    with pytest.raises(ConfigError, match="max_tokens must be at least 1, got -5"):
        ImportanceFilteringCompactor(max_tokens=-5)
    pm = PluginManager(entry_points=False, plugins=[plugin])
    assert pm.lookup("compactors", "importance").value is ImportanceFilteringCompactor


async def test_no_model_to_call_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"has no model to call.*pass model= or filterer="):
        await compactor().compact(transcript(), make_test_ctx())


class HouseModels:
    """Models only the manager this plugin is registered on knows: ``house:<name>``."""

    AGENTKIT_NAME = "house-models"

    @hookimpl
    def agentkit_register_models(self, register: Callable[..., None]) -> None:
        register("house", lambda name: ScriptedModel([], name=f"house:{name}"))


def test_a_model_string_is_resolved_on_the_manager_given_and_needs_one(pm: PluginManager) -> None:
    pm.register(HouseModels())
    assert ImportanceFilteringCompactor(model="house:m", manager=pm).model.name == "house:m"  # type: ignore[union-attr]
    built = get_compactor("importance", model="house:m", manager=pm)  # what Kit calls
    assert built.model.name == "house:m"  # type: ignore[attr-defined]
    needs = r"ImportanceFilteringCompactor\(model='house:m'\) needs manager="
    with pytest.raises(ConfigError, match=needs):
        ImportanceFilteringCompactor(model="house:m")  # never the process-wide manager
    model = ScriptedModel([])
    assert ImportanceFilteringCompactor(model=model).model is model  # a Model needs none
