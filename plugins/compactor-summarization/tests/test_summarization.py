import json
import re
from collections.abc import Callable

import agentkit_compactor_summarization as plugin
import pytest
from agentkit_compactor_summarization import SummarizationCompactor

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
from agentkit_core.plugin import SUMMARY
from agentkit_core.plugin import WorkingContext
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import get_compactor
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import check_compaction_invariants
from agentkit_core.testing import make_test_ctx


def history(rounds: int = 6) -> list[Message]:
    msgs = [Message.system("sys")]
    for i in range(rounds):
        msgs.append(Message.user(f"question {i} " + "q" * 80))
        call = ToolCall(f"c{i}", "search", json.dumps({"q": "x" * 80}))
        msgs.append(Message.assistant("", [call]))
        msgs.append(Message.tool(f"c{i}", "r" * 80, name="search"))
        msgs.append(Message.assistant(f"answer {i}"))
    return msgs


def compactor(**kwargs: object) -> SummarizationCompactor:
    return SummarizationCompactor(max_tokens=200, keep_recent=100, **kwargs)  # type: ignore[arg-type]


def skipped(ctx: RunContext) -> str:
    (span,) = ctx.trace.find("compaction")
    return str(span.attributes["compaction_skipped"])


async def test_the_older_middle_becomes_one_summary_and_the_cost_lands_on_the_run() -> None:
    msgs = history()
    model = ScriptedModel(["they searched six times"])
    ctx = make_test_ctx(model)
    out = await compactor().compact(msgs, ctx)
    check_compaction_invariants(msgs, out)
    assert out[0] is msgs[0]
    summary = out[1]
    assert summary.role == "user" and summary.metadata["compaction"] == SUMMARY
    assert summary.text == "Summary of the earlier conversation:\nthey searched six times"
    tail = out[2:]
    assert tail == msgs[len(msgs) - len(tail) :] and estimate_tokens(tail) <= 100
    assert summary.metadata["replaces"] == len(msgs) - 1 - len(tail)
    # the model saw the old messages, tool calls and results included, and nothing of the tail
    (request,) = model.requests
    text = request.messages[1].text
    assert "question 0" in text and "calls search(" in text and "as c0" in text
    assert "tool search result (c0)" in text and f"answer {len(msgs) // 4 - 1}" not in text
    # through the invoker: a traced model call under the compaction span, metered on the run
    (call,) = ctx.trace.find("model_call")
    assert call.parent == "compaction" and call.attributes["model"] == "scripted"
    assert ctx.usage.requests == 1 and ctx.usage.input_tokens == estimate_tokens(request.messages)
    (span,) = ctx.trace.find("compaction")
    assert span.attributes["compaction_summarized_messages"] == summary.metadata["replaces"]
    assert (
        span.attributes["compaction_summary_tokens"]
        < span.attributes["compaction_summarized_tokens"]
    )


async def test_model_picks_another_model_behind_the_same_chain() -> None:
    agent_model, writer = ScriptedModel([]), ScriptedModel(["short"], name="writer")
    ctx = make_test_ctx(agent_model)
    out = await compactor(model=writer).compact(history(), ctx)
    assert out[1].text.endswith("short")
    assert agent_model.requests == [] and len(writer.requests) == 1
    assert ctx.usage.requests == 1
    assert ctx.trace.find("model_call")[0].attributes["model"] == "writer"


async def test_a_summarizer_callable_writes_the_summary() -> None:
    seen: list[list[Message]] = []

    async def summarize(messages: list[Message], ctx: RunContext) -> str:
        seen.append(messages)
        return "  condensed  "

    msgs = history()
    out = await compactor(summarizer=summarize).compact(msgs, make_test_ctx())
    assert out[1].text.endswith("\ncondensed")
    assert seen == [msgs[1 : len(msgs) - len(out) + 2]]


async def test_under_the_threshold_nothing_is_asked() -> None:
    msgs = history(1)
    ctx = make_test_ctx(ScriptedModel([]))
    assert await SummarizationCompactor(max_tokens=10_000).compact(msgs, ctx) is msgs
    assert ctx.trace.spans == []


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (ProviderError("down"), "the summarizer failed: ProviderError: down"),
        ("   ", "the summarizer returned an empty summary"),
        ("z" * 5000, r"the summary \(\d+ tokens\) is no smaller than the \d+ messages"),
    ],
)
async def test_a_bad_answer_leaves_the_transcript_whole_and_says_why(
    answer: object, reason: str
) -> None:
    msgs = history()
    ctx = make_test_ctx(ScriptedModel([answer]))  # type: ignore[list-item]
    with ctx.trace.span("outer") as outer:
        out = await compactor().compact(msgs, ctx)
    assert out is msgs
    assert re.fullmatch(reason + ".*", skipped(ctx))
    assert outer.attributes["compaction_skipped"] == skipped(ctx)


async def test_nothing_older_than_the_tail_is_not_compacted() -> None:
    msgs = [Message.system("s"), Message.user("u" * 2000)]
    ctx = make_test_ctx(ScriptedModel([]))
    assert await compactor().compact(msgs, ctx) is msgs
    assert skipped(ctx) == "nothing older than the recent tail to summarize"


async def test_a_budget_exhausted_by_the_summary_call_is_not_swallowed() -> None:
    ctx = make_test_ctx(ScriptedModel(["s"]), budget=Budget(max_requests=0))
    with pytest.raises(BudgetExceeded, match="request budget exceeded"):
        await compactor().compact(history(), ctx)


async def test_as_middleware_in_a_run_the_summary_request_is_not_compacted_again() -> None:
    model = ScriptedModel(["the story so far", "final answer"])
    agent = Agent(
        model=model, prompt="be brief", hooks=Hooks(), middlewares=[compaction(compactor())]
    )
    wc, ctx = WorkingContext(messages=history()[1:]), agent.new_context()
    result = await agent.run("and now?", ctx=ctx, wc=wc)
    assert result.output == "final answer"
    summary_request, agent_request = model.requests
    assert summary_request.metadata["compaction"] == "summary"
    sent = agent_request.messages
    assert sent[0].text == "be brief" and sent[1].metadata["compaction"] == SUMMARY
    assert sent[-1].text == "and now?"
    assert result.usage.requests == 2
    # the compactor's own request passed the middleware untouched: one compaction, not two
    (span,) = ctx.trace.find("compaction")
    assert "compaction_skipped" not in span.attributes
    assert [s.parent for s in ctx.trace.find("model_call")] == ["turn", "compaction"]


def test_bad_options_and_registration(pm: PluginManager) -> None:
    async def s(messages: list[Message], ctx: RunContext) -> str:
        return ""

    with pytest.raises(ConfigError, match="both summarizer= and model="):
        SummarizationCompactor(s, model=ScriptedModel([]))
    with pytest.raises(ConfigError, match="max_tokens must be at least 1, got 0"):
        SummarizationCompactor(max_tokens=0)
    with pytest.raises(ConfigError, match="keep_recent must be at least 1 token, got 0"):
        SummarizationCompactor(keep_recent=0)
    with pytest.raises(ConfigError, match="'gpt' is not 'provider:model'"):
        SummarizationCompactor(model="gpt", manager=pm)
    pm = PluginManager(entry_points=False, plugins=[plugin])
    assert pm.lookup("compactors", "summarization").value is SummarizationCompactor


async def test_no_model_to_call_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"has no model to call.*pass model= or summarizer="):
        await compactor().compact(history(), make_test_ctx())


class HouseModels:
    """Models only the manager this plugin is registered on knows: ``house:<name>``."""

    AGENTKIT_NAME = "house-models"

    @hookimpl
    def agentkit_register_models(self, register: Callable[..., None]) -> None:
        register("house", lambda name: ScriptedModel([], name=f"house:{name}"))


def test_a_model_string_is_resolved_on_the_manager_given_and_needs_one(pm: PluginManager) -> None:
    pm.register(HouseModels())
    assert SummarizationCompactor(model="house:m", manager=pm).model.name == "house:m"  # type: ignore[union-attr]
    built = get_compactor("summarization", model="house:m", manager=pm)  # what Kit calls
    assert built.model.name == "house:m"  # type: ignore[attr-defined]
    needs = r"SummarizationCompactor\(model='house:m'\) needs manager="
    with pytest.raises(ConfigError, match=needs):
        SummarizationCompactor(model="house:m")  # never the process-wide manager
    model = ScriptedModel([])
    assert SummarizationCompactor(model=model).model is model  # a Model needs none


def test_the_core_names_it_shows_resolve_on_first_use() -> None:
    """INSTRUCTIONS, HEADER and Summarizer are the core's, read when first used."""
    import agentkit_compactor_summarization as plugin

    from agentkit_core import plugin as core

    assert plugin.INSTRUCTIONS is core.SUMMARY_INSTRUCTIONS
    assert plugin.HEADER is core.SUMMARY_HEADER
    assert plugin.Summarizer is core.Summarizer
    assert SummarizationCompactor().instructions is core.SUMMARY_INSTRUCTIONS
