"""RequestBuilder: the cache-stable prefix, grounding with provenance, budgets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import Prompt
from agentkit_core.plugin import MemoryItem
from agentkit_core.plugin import RequestBuilder
from agentkit_core.plugin import WorkingContext
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import render_grounding
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx

PROMPT = Prompt("briefer", "1.2.0", "You brief analysts.")


def counting_grounder(log: list[str]) -> Any:
    async def grounder(ctx: Any, task: str) -> str:
        log.append(task)
        return f"fact about {task}"

    return grounder


async def test_prefix_is_bit_identical_across_turns_without_regrounding() -> None:
    calls: list[str] = []
    builder = RequestBuilder(PROMPT, grounder=counting_grounder(calls))
    wc, ctx = WorkingContext(), make_test_ctx()
    first = await builder.build("octopus", wc, ctx)
    wc.messages.append(Message.assistant("answer one"))
    second = await builder.build("squid", wc, ctx)
    assert first.messages[:2] == second.messages[:2]
    assert first.messages[0] is second.messages[0]  # the very same objects: nothing rewritten
    assert calls == ["octopus"]
    assert second.messages[1].text == "Relevant context:\nfact about octopus"
    assert [m.text for m in second.messages[2:]] == ["octopus", "answer one", "squid"]
    assert second.prompt_version == "1.2.0"
    assert second.approx_tokens == estimate_tokens(second.messages)


async def test_reground_every_turn_refreshes_the_grounding() -> None:
    calls: list[str] = []
    builder = RequestBuilder(PROMPT, grounder=counting_grounder(calls), reground_every_turn=True)
    wc, ctx = WorkingContext(), make_test_ctx()
    await builder.build("octopus", wc, ctx)
    second = await builder.build("squid", wc, ctx)
    assert calls == ["octopus", "squid"]
    assert second.messages[1].text.endswith("fact about squid")


async def test_empty_grounding_means_no_grounding_message() -> None:
    async def nothing(ctx: Any, task: str) -> str:
        return ""

    built = await RequestBuilder(PROMPT, grounder=nothing).build(
        "x", WorkingContext(), make_test_ctx()
    )
    assert [m.role for m in built.messages] == ["system", "user"]


ITEMS = [
    MemoryItem("Octopuses have nine brains.", "handbook", 0.9, {"tier": "recorded"}),
    MemoryItem("Octopuses are probably aliens.", "run-42-summary", 0.8, {"tier": "inferred"}),
]


async def source(ctx: Any, task: str) -> list[MemoryItem]:
    return ITEMS


async def test_admit_runs_before_render_and_provenance_reaches_the_model() -> None:
    builder = RequestBuilder(
        PROMPT, grounding=source, admit=lambda item: item.metadata.get("tier") != "inferred"
    )
    built = await builder.build("octopus", WorkingContext(), make_test_ctx())
    assert built.messages[1].text == "Relevant context:\n[handbook] Octopuses have nine brains."
    assert (
        render_grounding(ITEMS).splitlines()[1] == "[run-42-summary] Octopuses are probably aliens."
    )


async def test_record_grounding_writes_json_that_round_trips() -> None:
    ctx = make_test_ctx()
    builder = RequestBuilder(PROMPT, grounding=source, record_grounding=True)
    await builder.build("octopus", WorkingContext(), ctx)
    encoded = json.dumps(ctx.scratchpad)
    record = json.loads(encoded)["grounding"][0]
    assert record["task"] == "octopus"
    assert [MemoryItem(**i) for i in record["items"]] == ITEMS


def test_both_grounding_sources_are_refused() -> None:
    async def grounder(ctx: Any, task: str) -> str:
        return ""

    with pytest.raises(ConfigError, match="both grounder= and grounding="):
        RequestBuilder(PROMPT, grounder=grounder, grounding=source)


async def test_budget_check_can_abort_a_build() -> None:
    def too_big(tokens: int) -> None:
        if tokens > 5:
            raise ConfigError(f"{tokens} tokens is over the budget")

    with pytest.raises(ConfigError, match="over the budget"):
        await RequestBuilder(PROMPT, budget_check=too_big).build(
            "x" * 100, WorkingContext(), make_test_ctx()
        )


async def test_a_builder_compactor_sees_only_the_tail() -> None:
    seen: list[list[str]] = []

    class LastTwo:
        async def compact(self, messages: list[Message], ctx: Any) -> list[Message]:
            seen.append([m.role for m in messages])
            return messages[-2:]

    builder = RequestBuilder(PROMPT, compactor=LastTwo())
    wc = WorkingContext()
    wc.messages.extend([Message.user("a"), Message.assistant("b"), Message.user("c")])
    built = await builder.build("d", wc, make_test_ctx())
    assert seen == [["user", "assistant", "user", "user"]]
    assert [m.text for m in built.messages] == ["You brief analysts.", "c", "d"]
    assert len(wc.messages) == 4  # the tail itself is kept whole


async def test_an_agent_builds_once_per_run_and_continues_a_conversation() -> None:
    calls: list[str] = []
    builder = RequestBuilder(PROMPT, grounder=counting_grounder(calls))
    model = ScriptedModel(["first answer", "second answer"])
    agent = Agent("chat", model, request_builder=builder, hooks=Hooks())
    wc = WorkingContext()
    await agent.run("octopus", wc=wc)
    await agent.run("squid", wc=wc)
    assert calls == ["octopus"]
    assert [m.text for m in model.requests[1].messages[2:]] == ["octopus", "first answer", "squid"]
