"""compaction(): refusals and span counts; picking a compactor by name; the builder's tail."""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import settings

from agentkit_core import Agent
from agentkit_core import Compactor
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Invoker
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import ModelRequest
from agentkit_core import Prompt
from agentkit_core import RequestBuilder
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import UnknownNameError
from agentkit_core import WorkingContext
from agentkit_core import compaction
from agentkit_core import compaction_units
from agentkit_core import estimate_tokens
from agentkit_core import get_compactor
from agentkit_core import get_plugin_manager
from agentkit_core import keep_units
from agentkit_core import recent_units
from agentkit_core import units_from_end
from agentkit_core import within_budget
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import transcripts


class Rewrite:
    """A compactor that returns whatever ``fn`` makes of the messages, recording what it saw."""

    def __init__(self, fn: Callable[[list[Message]], list[Message]]) -> None:
        self.fn = fn
        self.seen: list[list[Message]] = []

    async def compact(self, messages: list[Message], ctx: RunContext) -> list[Message]:
        self.seen.append(list(messages))
        return self.fn(messages)


def history() -> list[Message]:
    out: list[Message] = []
    for i in range(5):
        out.append(Message.user(f"q{i} " + "x" * 200))
        out.append(Message.assistant(f"a{i} " + "y" * 200))
    return out


async def run(compactor: Compactor) -> tuple[ScriptedModel, dict[str, object], list[Message]]:
    """One agent run over a long history; the model's request and the model_call span."""
    model = ScriptedModel(["done"])
    agent = Agent(model=model, prompt="sys", hooks=Hooks(), middlewares=[compaction(compactor)])
    ctx = agent.new_context()
    whole = [Message.system("sys"), *history(), Message.user("go")]
    await agent.run("go", ctx=ctx, wc=WorkingContext(messages=history()))
    (span,) = ctx.trace.find("model_call")
    return model, span.attributes, whole


@pytest.mark.parametrize(
    ("fn", "reason"),
    [
        (lambda ms: [], "the compactor returned no messages"),
        (lambda ms: ms[1:], "the compactor dropped or altered the leading system message"),
        (
            lambda ms: [Message.system("other"), *ms[1:]],
            "the compactor dropped or altered the leading system message",
        ),
    ],
)
async def test_an_unsafe_rewrite_is_refused_and_the_request_goes_whole(
    fn: Callable[[list[Message]], list[Message]], reason: str
) -> None:
    model, span, whole = await run(Rewrite(fn))
    assert list(model.requests[0].messages) == whole
    assert span["compaction_rejected"] == reason
    assert "compaction_messages_after" not in span


async def test_the_span_records_message_and_token_counts_before_and_after() -> None:
    model, span, whole = await run(get_compactor("truncation", max_tokens=200))
    sent = list(model.requests[0].messages)
    assert sent[0] == whole[0] and sent[-1] == whole[-1] and len(sent) < len(whole)
    assert span["compaction_messages_before"] == len(whole)
    assert span["compaction_messages_after"] == len(sent)
    assert span["compaction_tokens_before"] == estimate_tokens(whole)
    assert span["compaction_tokens_after"] == estimate_tokens(sent) <= 200
    assert "compaction_rejected" not in span


async def test_an_unchanged_transcript_passes_as_it_came() -> None:
    model, span, whole = await run(Rewrite(lambda ms: ms))
    assert list(model.requests[0].messages) == whole
    assert span["compaction_messages_before"] == span["compaction_messages_after"] == len(whole)


async def test_without_a_run_context_the_compactor_is_not_called() -> None:
    compactor = Rewrite(lambda ms: [])
    model = ScriptedModel(["ok"])
    response = await Invoker(model, [compaction(compactor)]).chat(
        ModelRequest((Message.user("hi"),))
    )
    assert response.message.text == "ok" and compactor.seen == []


def test_compaction_needs_a_compactor() -> None:
    with pytest.raises(ConfigError, match=r"compaction\(\) needs a Compactor object.*got None"):
        compaction(None)  # type: ignore[arg-type]


def test_an_unknown_name_lists_the_installed_compactors() -> None:
    installed = [r.name for r in get_plugin_manager().registrations("compactors")]
    assert "truncation" in installed and "sliding-window" in installed
    with pytest.raises(UnknownNameError, match="no compactor named 'nope' is installed") as info:
        get_compactor("nope")
    assert all(name in str(info.value) for name in installed)
    assert info.value.available == tuple(installed)


def test_get_compactor_builds_the_named_plugin_with_its_options() -> None:
    compactor = get_compactor("truncation", max_tokens=321)
    assert type(compactor).__name__ == "TruncationCompactor"
    assert compactor.max_tokens == 321  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="max_tokens must be at least 1, got 0"):
        get_compactor("truncation", max_tokens=0)


async def test_the_kit_names_a_compactor_and_runs_it_as_the_middleware() -> None:
    config = Kit(
        model=ScriptedModel(["done"]),
        compactor="truncation",
        compactor_options={"max_tokens": 200},
    ).config()
    agent = Agent.from_config(config, hooks=Hooks())
    ctx = agent.new_context()
    await agent.run("go", ctx=ctx, wc=WorkingContext(messages=history()))
    (span,) = ctx.trace.find("model_call")
    assert span.attributes["compaction_tokens_after"] <= 200


async def test_through_a_request_builder_the_compactor_sees_only_the_tail() -> None:
    async def ground(ctx: RunContext, task: str) -> str:
        return "the fact"

    compactor = Rewrite(lambda ms: ms[-2:])
    builder = RequestBuilder(
        Prompt("p", "1", "You are terse."), grounder=ground, compactor=compactor
    )
    wc, ctx = WorkingContext(), make_test_ctx()
    first = await builder.build("one", wc, ctx)
    wc.messages.append(Message.assistant("answer one"))
    second = await builder.build("two", wc, ctx)
    assert [[m.text for m in seen] for seen in compactor.seen] == [
        ["one"],
        ["one", "answer one", "two"],
    ]
    assert all(m.role != "system" for seen in compactor.seen for m in seen)
    assert second.messages[:2] == first.messages[:2]  # the prefix, untouched
    assert [m.text for m in second.messages[2:]] == ["answer one", "two"]


def tool_heavy(n: int) -> list[Message]:
    out = [Message.system("s")]
    for i in range(n):
        calls = [ToolCall(f"c{i}a", "f", json.dumps({"i": i})), ToolCall(f"c{i}b", "g")]
        out += [Message.user(f"u{i}"), Message.assistant("", calls)]
        out += [Message.tool(c.id, "r") for c in calls]
    return out


def test_the_cut_helpers_keep_whole_units_in_order() -> None:
    msgs = [Message.tool("gone", "r"), *tool_heavy(3)[1:]]
    msgs.insert(0, Message.system("s"))
    units = compaction_units(msgs)
    assert [u.kind for u in units] == ["system", "orphan"] + ["message", "tool_turn"] * 3
    assert [(u.start, u.end) for u in units[2:4]] == [(2, 3), (3, 6)]
    assert sum(u.tokens for u in units) == estimate_tokens(msgs)
    assert list(units_from_end(msgs)) == units[::-1]
    kept = recent_units(reversed(units), 2, lambda u: 1)
    assert kept == units[-2:]
    assert keep_units(msgs, [kept[1], units[0], kept[0]]) == [msgs[0], *msgs[-4:]]
    # the newest unit is kept even over the budget; orphans never
    assert recent_units(units_from_end(msgs), 0, lambda u: 10) == units[-1:]
    assert recent_units(reversed(units[:2]), 10, lambda u: 1) == []
    assert within_budget(units_from_end(msgs), estimate_tokens(msgs))
    assert not within_budget(units_from_end(msgs), estimate_tokens(msgs) - 1)


def test_walking_back_estimates_only_the_units_it_takes() -> None:
    seen: list[int] = []

    def estimate(ms: Iterable[Message]) -> int:
        ms = list(ms)
        seen.extend(id(m) for m in ms)
        return 10 * len(ms)

    msgs = tool_heavy(1_000)
    kept = recent_units(units_from_end(msgs, estimate), 100, lambda u: u.tokens)
    assert keep_units(msgs, kept) == msgs[-8:]
    assert len(seen) < 20  # the 4,000 older messages were never estimated


@settings(max_examples=150, deadline=None)
@given(transcripts())
def test_units_partition_any_transcript_at_safe_cuts(messages: list[Message]) -> None:
    units = compaction_units(messages)
    ends = [u.end for u in units]
    assert [u.start for u in units] == [0, *ends[:-1]]
    assert ends[-1:] == [len(messages)][: len(ends)]
    assert sum(u.tokens for u in units) == estimate_tokens(messages)
    for unit in units:
        first, rest = messages[unit.start], messages[unit.start + 1 : unit.end]
        if unit.kind == "tool_turn":
            ids = {c.id for c in first.tool_calls}
            assert first.role == "assistant"
            assert all(m.role == "tool" and m.tool_call_id in ids for m in rest)
            after = messages[unit.end] if unit.end < len(messages) else None
            assert after is None or after.role != "tool" or after.tool_call_id not in ids
        elif unit.kind == "orphan":
            assert all(m.role == "tool" for m in messages[unit.start : unit.end])
        else:
            assert unit.size == 1
