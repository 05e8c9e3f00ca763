"""compaction(): refusals, repairs, span counts; a compactor by name; the builder's tail."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PendingToolCallError
from agentkit_core import PluginManager
from agentkit_core import Prompt
from agentkit_core import RunContext
from agentkit_core import RunError
from agentkit_core import ToolCall
from agentkit_core import UnknownNameError
from agentkit_core import compaction
from agentkit_core import get_plugin_manager
from agentkit_core.plugin import Compactor
from agentkit_core.plugin import Invoker
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import RequestBuilder
from agentkit_core.plugin import WorkingContext
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import get_compactor
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx

#: A fresh manager for what runs outside a test's fixtures (a Hypothesis test, a
#: parametrize), never the process-wide one.
PM = PluginManager()


class Rewrite:
    """A compactor that returns whatever ``fn`` makes of the messages, recording what it saw.

    Typed as compactors were before the protocol took a Sequence (a list in, a list out): such
    a third-party compactor that indexes, slices and joins must still work."""

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


async def test_the_span_records_message_and_token_counts_before_and_after(pm) -> None:
    """A run's first request, compacted: the whole request's estimate is not known without
    reading what was dropped, so the span leaves it out (issue 22)."""
    model, span, whole = await run(get_compactor("truncation", max_tokens=200, manager=pm))
    sent = list(model.requests[0].messages)
    assert sent[0] == whole[0] and sent[-1] == whole[-1] and len(sent) < len(whole)
    assert span["compaction_messages_before"] == len(whole)
    assert span["compaction_messages_after"] == len(sent)
    assert "compaction_tokens_before" not in span
    assert span["compaction_tokens_after"] == estimate_tokens(sent) <= 200
    assert "compaction_rejected" not in span


async def test_a_request_nothing_is_dropped_from_counts_its_tokens_before(pm) -> None:
    model, span, whole = await run(get_compactor("truncation", max_tokens=100_000, manager=pm))
    assert list(model.requests[0].messages) == whole
    assert span["compaction_tokens_before"] == span["compaction_tokens_after"]
    assert span["compaction_tokens_after"] == estimate_tokens(whole)


@pytest.mark.parametrize(
    "fn",
    [
        lambda ms: ms[:1] + ms[-3:],  # slices are lists: joined as lists were
        lambda ms: [ms[0], *ms[len(ms) - 3 :]],
        lambda ms: ms[:1] + [m for m in reversed(ms) if m.role == "user"][:1] + ms[-2:],
    ],
)
async def test_a_compactor_written_for_a_list_indexes_slices_and_joins_the_view(
    fn: Callable[[list[Message]], list[Message]],
) -> None:
    model, span, whole = await run(Rewrite(fn))
    sent = list(model.requests[0].messages)
    assert sent[0] == whole[0] and sent[-2:] == whole[-2:] and len(sent) < len(whole)
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


def test_an_unknown_name_lists_the_installed_compactors(pm) -> None:
    installed = [r.name for r in get_plugin_manager().registrations("compactors")]
    assert "truncation" in installed and "sliding-window" in installed
    with pytest.raises(UnknownNameError, match="no compactor named 'nope' is installed") as info:
        get_compactor("nope", manager=pm)
    assert all(name in str(info.value) for name in installed)
    assert info.value.available == tuple(installed)


def test_get_compactor_builds_the_named_plugin_with_its_options(pm) -> None:
    compactor = get_compactor("truncation", max_tokens=321, manager=pm)
    assert type(compactor).__name__ == "TruncationCompactor"
    assert compactor.max_tokens == 321  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="max_tokens must be at least 1, got 0"):
        get_compactor("truncation", max_tokens=0, manager=pm)


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


async def send(compactor: Compactor, messages: list[Message]) -> tuple[list[Message], dict]:
    """What compaction(compactor) sends for ``messages``, and the span it stamped."""
    sent: list[ModelRequest] = []

    async def model(request: ModelRequest) -> ModelResponse:
        sent.append(request)
        return ModelResponse(Message.assistant("ok"))

    ctx = make_test_ctx()
    with ctx.trace.span("model_call") as span:
        await compaction(compactor).wrap_model(ModelRequest(tuple(messages), ctx=ctx), model)
    return list(sent[0].messages), span.attributes


BROKEN = [
    Message.system("s"),
    Message.tool("gone", "a result nobody asked for"),
    Message.user("hi"),
    Message.assistant("", [ToolCall("lost", "f"), ToolCall("kept", "g")]),
    Message.user("are you there?"),
    Message.tool("kept", "the other call's result"),
    Message.assistant("", [ToolCall("c1", "f")]),
    Message.user("yes, go ahead"),  # between a call and its result
    Message.tool("c1", "done"),
    Message.user("thanks"),
]


@pytest.mark.parametrize(
    "compactor",
    [
        Rewrite(lambda ms: ms),  # unchanged
        Rewrite(lambda ms: []),  # refused
        get_compactor("truncation", max_tokens=10**6, manager=PM),  # under its threshold
    ],
    ids=["unchanged", "refused", "under-threshold"],
)
async def test_what_no_provider_accepts_is_dropped_whatever_the_compactor_did(
    compactor: Compactor,
    pm,
) -> None:
    sent, span = await send(compactor, BROKEN)
    assert sent == [BROKEN[0], BROKEN[2], BROKEN[4], *BROKEN[6:]]
    assert span["compaction_repaired_messages"] == 3
    assert span["compaction_repaired"] == (
        "dropped 3 message(s): tool results 'gone', 'kept'; assistant messages with calls "
        "'lost', 'kept'"
    )


async def test_a_valid_request_is_not_repaired() -> None:
    sent, span = await send(Rewrite(lambda ms: ms), BROKEN[6:])
    assert sent == BROKEN[6:] and "compaction_repaired" not in span


async def test_a_request_ending_on_pending_calls_is_refused_before_the_compactor_runs() -> None:
    compactor = Rewrite(lambda ms: ms)
    pending = [
        Message.user("go"),
        Message.assistant("", [ToolCall("p1", "deploy"), ToolCall("p2", "notify")]),
        Message.tool("p2", "sent"),
    ]
    with pytest.raises(PendingToolCallError, match=r"deploy \('p1'\); run them") as info:
        await send(compactor, pending)
    assert [c.id for c in info.value.calls] == ["p1"] and compactor.seen == []


async def test_a_request_with_nothing_sendable_is_refused() -> None:
    with pytest.raises(RunError, match="holds nothing a provider accepts"):
        await send(Rewrite(lambda ms: ms), [Message.tool("gone", "x")])
