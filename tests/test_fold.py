"""Folding: a summary the transcript keeps, written once per fold, outside the retry, backed off."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Folding
from agentkit_core import Hooks
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import Prompt
from agentkit_core import ProviderError
from agentkit_core import RunContext
from agentkit_core import RunState
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import Usage
from agentkit_core import compaction
from agentkit_core import open_checkpointer
from agentkit_core import tool
from agentkit_core.plugin import SUMMARY
from agentkit_core.plugin import Fold
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import RequestBuilder
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import WorkingContext
from agentkit_core.plugin import decode_state
from agentkit_core.plugin import encode_state
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import fold_cut
from agentkit_core.testing import check_sendable
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import transcripts

Answer = str | Message | BaseException


class Split:
    """A model double: summary requests get ``summary`` (or raise it); the agent's requests are
    answered from ``script``, and after it with a final answer."""

    name = "split"

    def __init__(self, script: list[Answer], summary: Answer = "the story so far") -> None:
        self.script = list(script)
        self.summary = summary
        self.summaries: list[ModelRequest] = []
        self.main: list[ModelRequest] = []

    async def request(self, request: ModelRequest) -> ModelResponse:
        if request.metadata.get("compaction"):
            self.summaries.append(request)
            answer: Answer = self.summary
        else:
            self.main.append(request)
            answer = self.script.pop(0) if self.script else "done"
        if isinstance(answer, BaseException):
            raise answer
        message = answer if isinstance(answer, Message) else Message.assistant(answer)
        return ModelResponse(message, Usage(estimate_tokens(request.messages), 1, 1), "stop")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield StreamEvent("done", response=await self.request(request))


@tool
def fetch(page: int) -> str:
    """Fetch a page."""
    return f"page {page}: " + "lorem ipsum " * 30


def calls(n: int, start: int = 0) -> list[Answer]:
    """``n`` turns that each fetch one page."""
    return [
        Message.assistant("", [ToolCall(f"f{i}", "fetch", json.dumps({"page": i}))])
        for i in range(start, start + n)
    ]


def history(rounds: int) -> list[Message]:
    out: list[Message] = []
    for i in range(rounds):
        out += [Message.user(f"question {i} " + "q" * 200), Message.assistant(f"answer {i}")]
    return out


def agent(model: Split, folding: Folding, **kwargs: Any) -> Agent:
    options: dict[str, Any] = {"hooks": Hooks(), "tools": [fetch], "max_turns": 60}
    return Agent("reader", model, "You read pages.", compaction=folding, **{**options, **kwargs})


class Heard(list[Fold]):
    """An observer that keeps every fold it hears."""

    def __call__(self, ctx: RunContext, fold: Fold) -> None:
        self.append(fold)


async def test_a_fold_replaces_the_older_part_and_later_turns_send_the_summary() -> None:
    heard = Heard()
    model = Split(calls(2))
    folding = Folding(budget=400, keep_recent=150, on_fold=heard)
    wc = WorkingContext(messages=history(8))
    result = await agent(model, folding).run("read two pages", wc=wc)
    assert result.output == "done"
    (fold,) = heard
    assert len(model.summaries) == 1 and fold.error is None
    summary = fold.summary
    assert summary is not None and summary.metadata["compaction"] == SUMMARY
    assert summary.text == "Summary of the earlier conversation:\nthe story so far"
    # the run's transcript keeps it: the prefix, the summary, then what came after
    assert result.transcript[0].role == "system" and result.transcript[1] is summary
    assert fold.start == 1 and fold.folded[0].text.startswith("question 0")
    assert fold.tokens_after < fold.tokens_before
    # every request of the run sent the summary and none of what it replaced
    for request in model.main:
        assert request.messages[1] is summary
        assert not any(m.text.startswith("question 0") for m in request.messages)
    # the summary request saw the older messages, and no message after the cut
    text = model.summaries[0].messages[1].text
    assert "question 0" in text and "read two pages" not in text
    # the conversation carries the folded transcript on
    assert wc.messages[0] is summary


async def test_a_long_run_writes_one_summary_per_fold() -> None:
    heard = Heard()
    model = Split(calls(50))
    folding = Folding(budget=1_500, keep_recent=600, on_fold=heard)
    await agent(model, folding).run("read fifty pages")
    assert len(heard) >= 4 and all(f.error is None for f in heard)
    assert len(model.summaries) == len(heard)
    # no request is larger than the budget by more than the turn that crossed it
    turn = estimate_tokens([Message.tool("f0", fetch.fn(page=10))]) + 40
    assert max(estimate_tokens(r.messages) for r in model.main) <= 1_500 + turn


async def test_a_retried_call_does_not_fold_again() -> None:
    busy = ProviderError("overloaded", retryable=True, retry_after=0)
    model = Split([busy, *calls(1)])
    result = await agent(model, Folding(budget=400, keep_recent=150)).run(
        "go", wc=WorkingContext(messages=history(8))
    )
    assert result.output == "done"
    assert len(model.summaries) == 1 and len(model.main) == 3
    assert model.main[0].messages == model.main[1].messages  # the retry resent the same request


async def test_a_failed_fold_sends_the_transcript_whole_and_backs_off() -> None:
    heard = Heard()
    asked_on: list[int] = []  # the turn of each summary asked for

    async def summarizer(old: list[Message], ctx: RunContext) -> str:
        asked_on.append(len(model.main) + 1)
        if len(asked_on) == 1:
            raise RuntimeError("summary service down")
        return "short"

    model = Split(calls(10))
    folding = Folding(budget=400, keep_recent=200, summarizer=summarizer, on_fold=heard)
    await agent(model, folding).run("go", wc=WorkingContext(messages=history(8)))
    failed, folded = heard[0], heard[1]
    assert failed.summary is None and failed.tokens_after == failed.tokens_before
    assert failed.error == "the summarizer failed: RuntimeError: summary service down"
    assert folded.error is None and folded.summary is not None
    # the failed turn sent the whole transcript
    assert estimate_tokens(model.main[0].messages) == failed.tokens_before > 400
    # backed off: turns went whole, with no summary asked, until the fold could cover all
    # that the failed one saw (the prefix, the history and the task: 18 messages)
    assert asked_on[0] == 1 and asked_on[1] > 2
    assert all(estimate_tokens(r.messages) > 400 for r in model.main[: asked_on[1] - 1])
    assert folded.start + len(folded.folded) >= 18 > failed.start + len(failed.folded)
    assert fold_cut(model.main[asked_on[1] - 2].messages, 200, head=1) < 18


async def test_the_back_off_survives_a_checkpoint_and_a_resume(pm) -> None:
    async def down(old: list[Message], ctx: RunContext) -> str:
        raise RuntimeError("down")

    def ask(ctx: RunContext, call: ToolCall) -> ToolDecision | None:
        return ToolDecision.ask("a person approves") if call.id == "f1" else None

    cp = await open_checkpointer("memory://", manager=pm)
    model = Split(calls(2))
    folding = Folding(budget=400, keep_recent=150, summarizer=down)
    reader = agent(model, folding, hooks=Hooks.of(before_tool_call=ask), checkpointer=cp)
    first = await reader.run("go", wc=WorkingContext(messages=history(8)))
    assert first.status == "suspended"
    saved = await cp.resume(first.run_id)
    assert saved is not None and saved.state["fold_backoff"] == 18
    calls_before = len(model.summaries)
    done = await reader.resume(first.run_id, ["f1"])
    assert done.output == "done" and len(model.summaries) == calls_before  # still backing off
    await cp.aclose()


async def test_the_checkpoint_keeps_the_summary_and_a_resume_sends_it(pm) -> None:
    def ask(ctx: RunContext, call: ToolCall) -> ToolDecision | None:
        return ToolDecision.ask("a person approves") if call.id == "f0" else None

    cp = await open_checkpointer("memory://", manager=pm)
    model = Split(calls(1))
    reader = agent(
        model,
        Folding(budget=400, keep_recent=150),
        hooks=Hooks.of(before_tool_call=ask),
        checkpointer=cp,
    )
    first = await reader.run("go", wc=WorkingContext(messages=history(8)))
    saved = await cp.resume(first.run_id)
    assert saved is not None
    assert saved.state["transcript"][1].metadata["compaction"] == SUMMARY
    done = await reader.resume(first.run_id, ["f0"])
    assert done.output == "done" and len(model.summaries) == 1
    assert model.main[-1].messages[1].metadata["compaction"] == SUMMARY
    await cp.aclose()


async def test_every_observer_hears_and_a_broken_one_stops_nothing() -> None:
    heard = Heard()

    async def broken(ctx: RunContext, fold: Fold) -> None:
        raise ValueError("the recorder is full")

    model = Split([])
    reader = agent(model, Folding(budget=400, keep_recent=150, on_fold=[broken, heard]))
    ctx = reader.new_context()
    await reader.run("go", ctx=ctx, wc=WorkingContext(messages=history(8)))
    assert len(heard) == 1
    (span,) = ctx.trace.find("fold")
    assert "broken: ValueError: the recorder is full" in span.attributes["fold_observer_error"]
    assert span.attributes["fold_messages"] == len(heard[0].folded)


async def test_the_fold_summarizes_what_the_transforms_made_of_the_transcript() -> None:
    def redact(ctx: RunContext, transcript: list[Message]) -> list[Message]:
        return [
            Message(m.role, m.text.replace("SECRET", "[redacted]")) if "SECRET" in m.text else m
            for m in transcript
        ]

    model = Split([])
    hist = history(8)
    hist[2] = Message.user("the code is SECRET " + "q" * 200)
    reader = agent(model, Folding(budget=400, keep_recent=150), hooks=Hooks.of(transform=redact))
    result = await reader.run("go", wc=WorkingContext(messages=hist))
    (summary_request,) = model.summaries
    assert "[redacted]" in summary_request.messages[1].text
    assert "SECRET" not in summary_request.messages[1].text
    assert result.transcript[1].metadata["compaction"] == SUMMARY
    assert result.transcript[-2].text == "go"  # the task: after the cut, the run's own message


async def test_transforms_that_return_only_copies_leave_the_fold_nothing_to_replace() -> None:
    def copies(ctx: RunContext, transcript: list[Message]) -> list[Message]:
        return [Message(m.role, m.content, m.tool_calls, m.tool_call_id) for m in transcript]

    heard = Heard()
    model = Split([])
    reader = agent(model, Folding(budget=400, on_fold=heard), hooks=Hooks.of(transform=copies))
    result = await reader.run("go", wc=WorkingContext(messages=history(8)))
    assert heard[0].error is not None and "returned none of the transcript's recent" in (
        heard[0].error
    )
    assert model.summaries == [] and len(result.transcript) == 1 + 16 + 1 + 1


async def test_the_prefix_is_never_folded() -> None:
    async def ground(ctx: RunContext, task: str) -> str:
        return "the handbook says hello"

    model = Split([])
    builder = RequestBuilder(Prompt("p", "1", "You read pages."), grounder=ground)
    reader = agent(model, Folding(budget=400, keep_recent=150), request_builder=builder)
    result = await reader.run("go", wc=WorkingContext(messages=history(8)))
    assert [m.role for m in result.transcript[:3]] == ["system", "system", "user"]
    assert result.transcript[2].metadata["compaction"] == SUMMARY


async def test_a_conversation_goes_on_from_the_summary() -> None:
    model = Split([])
    reader = agent(model, Folding(budget=400, keep_recent=150))
    wc = WorkingContext(messages=history(8))
    await reader.run("first", wc=wc)
    await reader.run("second", wc=wc)
    assert len(model.summaries) == 1
    second = model.main[-1].messages
    assert second[1].metadata["compaction"] == SUMMARY and second[-1].text == "second"


async def test_a_summary_cut_short_fails_the_fold() -> None:
    heard = Heard()

    class Short(Split):
        async def request(self, request: ModelRequest) -> ModelResponse:
            response = await super().request(request)
            if request.metadata.get("compaction"):
                return ModelResponse(response.message, response.usage, "length")
            return response

    await agent(Short([]), Folding(budget=400, on_fold=heard)).run(
        "go", wc=WorkingContext(messages=history(8))
    )
    assert heard[0].error == "the summary was cut short (finish_reason 'length')"


async def test_the_summary_request_passes_the_compaction_middleware_untouched() -> None:
    seen: list[list[Message]] = []

    class Watch:
        async def compact(self, messages: list[Message], ctx: RunContext) -> list[Message]:
            seen.append(messages)
            return messages

    model = Split([])
    reader = agent(model, Folding(budget=400), middlewares=[compaction(Watch())])
    await reader.run("go", wc=WorkingContext(messages=history(8)))
    assert len(model.summaries) == 1 and len(seen) == len(model.main) == 1


def test_a_fold_encodes_for_a_record() -> None:
    summary = Message("user", "s", metadata={"compaction": SUMMARY})
    fold = Fold(1, (Message.user("old"),), summary, 90, 20)
    data = decode_state(encode_state(fold))
    assert data["folded"] == [Message.user("old")] and data["summary"] == summary
    assert data["summary"].metadata == {"compaction": SUMMARY} and data["error"] is None


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"budget": 0}, "budget must be a positive number of tokens, got 0"),
        ({"budget": True}, "budget must be a positive number of tokens, got True"),
        ({"budget": 100, "keep_recent": 100}, "keep_recent must be .* below the budget \\(100\\)"),
        ({"budget": 100, "keep_recent": 0}, "keep_recent must be"),
        ({"budget": 100, "model": "test", "summarizer": print}, "both summarizer= and model="),
        ({"budget": 100, "on_fold": [1]}, "on_fold takes functions"),
    ],
)
def test_bad_options_are_refused_at_construction(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Folding(**options)


def test_the_agent_takes_only_a_folding() -> None:
    with pytest.raises(ConfigError, match=r"compaction= takes a Folding .* middlewares="):
        Agent(model="test", compaction=object())  # type: ignore[arg-type]


def test_the_kit_builds_the_fold_from_its_options() -> None:
    heard = Heard()
    kit = Kit(model="test", compaction={"budget": 5_000, "model": "test", "on_fold": heard})
    folding = kit.config().compaction
    assert isinstance(folding, Folding)
    assert (folding.budget, folding.keep_recent, folding.on_fold) == (5_000, 2_500, (heard,))
    assert folding.model is not None and folding.model.name == "test"
    assert Agent.from_config(kit.config()).compaction is folding
    with pytest.raises(ConfigError, match=r"unknown key\(s\) budgte; its keys are budget, "):
        Kit(model="test", compaction={"budgte": 10})
    with pytest.raises(ConfigError, match="compaction= has no budget"):
        Kit(model="test", compaction={"keep_recent": 10})
    with pytest.raises(ConfigError, match="takes the options of the fold as a table"):
        Kit(model="test", compaction=60_000)


@settings(max_examples=150, deadline=None)
@given(transcripts(faults=False), st.floats(0.05, 1.5), st.floats(0.1, 0.9))
def test_a_fold_keeps_the_prefix_and_a_sendable_transcript(
    messages: list[Message], fraction: float, keep: float
) -> None:
    messages = [Message.system("sys"), *messages]
    size = estimate_tokens(messages)
    budget = max(2, int(size * fraction))
    folding = Folding(budget=budget, keep_recent=max(1, int(budget * keep)), summarizer=_one_word)
    state = RunState("t", list(messages))
    sent = asyncio.run(folding.apply(make_test_ctx(), state, state.transcript))
    after = state.transcript
    check_sendable(after)
    assert sent == after  # with no transforms, what is sent is what is kept
    head = next(i for i, m in enumerate([*messages, Message.user("")]) if m.role != "system")
    assert all(a is b for a, b in zip(after[:head], messages[:head], strict=True))
    if after == messages:
        return
    summary, rest = after[head], after[head + 1 :]
    assert summary.metadata["compaction"] == SUMMARY
    assert all(a is b for a, b in zip(rest, messages[len(messages) - len(rest) :], strict=True))
    cut = fold_cut(messages, folding.keep_recent, head=head)
    assert len(messages) - len(rest) == cut
    assert estimate_tokens(after) < size


async def _one_word(old: list[Message], ctx: RunContext) -> str:
    return "gist"


async def test_a_fold_of_one_message_still_carries_the_summary_into_the_conversation() -> None:
    model = Split([])
    wc = WorkingContext(messages=[Message.user("x" * 4_000)])
    await agent(model, Folding(budget=400, keep_recent=100)).run("go", wc=wc)
    assert len(model.summaries) == 1
    assert wc.messages[0].metadata["compaction"] == SUMMARY
    assert [m.text for m in wc.messages[1:]] == ["go", "done"]
