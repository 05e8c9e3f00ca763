"""compaction() costs what it keeps: through the middleware, a request carries exactly the bare
compactor's result (repaired), its span counts stay exact across a run's requests, and on a
run's requests (its first too) the messages it drops are not read at all."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import agentkit_core._tokens as tokens_module
import agentkit_core._units as units_module
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import compaction
from agentkit_core.plugin import Invoker
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import get_compactor
from agentkit_core.plugin import pending_calls
from agentkit_core.plugin import repair_transcript
from agentkit_core.plugin import tracing
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx
from agentkit_core.testing import transcripts

#: A fresh manager for the helpers below (Hypothesis runs them), never the process-wide one.
PM = PluginManager()

COMPACTORS = st.one_of(
    st.integers(1, 400).map(lambda n: ("truncation", {"max_tokens": n})),
    st.integers(1, 12).map(lambda n: ("sliding-window", {"keep_recent": n})),
)


def send(
    spec: tuple[str, dict[str, Any]], requests: Sequence[Sequence[Message]]
) -> tuple[list[tuple[Message, ...]], list[dict[str, Any]]]:
    """The requests, in turn, through one compaction() in one run: what the model got, the spans."""
    name, options = spec
    model = ScriptedModel(["ok"] * len(requests))
    ctx = make_test_ctx()
    invoker = Invoker(
        model, [tracing(), compaction(get_compactor(name, manager=PM, **options))], ctx=ctx
    )

    async def go() -> None:
        for messages in requests:
            await invoker.chat(ModelRequest(tuple(messages)))

    asyncio.run(go())
    spans = [span.attributes for span in ctx.trace.find("model_call")]
    return [request.messages for request in model.requests], spans


def bare(spec: tuple[str, dict[str, Any]], messages: Sequence[Message]) -> tuple[Any, bool]:
    """The compactor's result for ``messages`` and whether it gave them back unchanged."""
    name, options = spec
    given = list(messages)
    result = asyncio.run(get_compactor(name, manager=PM, **options).compact(given, make_test_ctx()))
    return result, result is given


@settings(max_examples=120, deadline=None)
@given(transcripts(), transcripts(), COMPACTORS, st.data())
def test_each_request_of_a_run_carries_the_bare_compactors_result(
    history: list[Message],
    more: list[Message],
    spec: tuple[str, dict[str, Any]],
    data: st.DataObject,
) -> None:
    """A run's requests: a transcript, the same grown, then one with an earlier message
    replaced. Each sends the compactor's own result (repaired), message for message. Its span
    counts the request's messages and what is sent; the whole request's tokens when that is
    known without reading what was dropped (nothing dropped, or the run's last request known
    and extended), exactly, and never otherwise."""
    whole = history + more
    assume(whole)
    at = data.draw(st.integers(0, len(whole) - 1))
    edited = [
        *whole[:at],
        Message.user("an edit " * data.draw(st.integers(0, 9))),
        *whole[at + 1 :],
    ]
    requests = [history, whole, edited]
    assume(all(r and not pending_calls(r) for r in requests))
    kept = [bare(spec, r) for r in requests]
    assume(all(repair_transcript(k)[0] for k, _ in kept))  # else a RunError, as test_compaction
    sent, spans = send(spec, requests)
    known = False
    for i, (messages, (compacted, unchanged), got, span) in enumerate(
        zip(requests, kept, sent, spans, strict=True)
    ):
        expected, _ = repair_transcript(compacted)
        assert len(got) == len(expected) and all(map(operator.is_, got, expected))
        assert span["compaction_messages_before"] == len(messages)
        assert span["compaction_tokens_after"] == estimate_tokens(compacted)
        tokens = span.get("compaction_tokens_before")
        if unchanged or (known and i == 1):  # i == 1: the run's last request, grown
            assert tokens == estimate_tokens(messages)
        elif i < 2:  # the edit may equal what it replaced, and then extend the last request
            assert tokens is None
        assert tokens in (None, estimate_tokens(messages))
        known = tokens is not None


def rounds(n: int, start: int = 0) -> list[Message]:
    """``n`` rounds of a question, a tool call, its result and an answer."""
    out: list[Message] = []
    for i in range(start, start + n):
        call = ToolCall(f"c{i:05d}", "search", f'{{"q": "{i:05d}"}}')
        out += [
            Message.user(f"question {i:05d}"),
            Message.assistant("", [call]),
            Message.tool(call.id, f"result {i:05d} " + "x" * 40, name="search"),
            Message.assistant(f"answer {i:05d}"),
        ]
    return out


@pytest.mark.parametrize(
    "spec", [("truncation", {"max_tokens": 600}), ("sliding-window", {"keep_recent": 12})]
)
def test_a_runs_next_request_reads_only_what_it_keeps_and_what_is_new(
    spec: tuple[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Count the messages estimated (the only per-message reading the middleware and the
    compactors do) on a run's next request: the same whether 100 or 1,000 rounds are dropped."""
    read: list[Message] = []
    real = tokens_module.estimate_message

    def counting(message: Message) -> int:
        read.append(message)
        return real(message)

    monkeypatch.setattr(tokens_module, "estimate_message", counting)
    monkeypatch.setattr(units_module, "estimate_message", counting)
    name, options = spec
    counts, firsts = {}, {}
    for dropped in (100, 1_000):
        head = (Message.system("You are terse."), *rounds(dropped))
        new = tuple(rounds(1, start=dropped))
        model = ScriptedModel(["ok", "ok"])
        ctx = make_test_ctx()
        invoker = Invoker(
            model, [tracing(), compaction(get_compactor(name, manager=PM, **options))], ctx=ctx
        )

        async def turns(
            invoker: Invoker, head: tuple[Message, ...], new: tuple[Message, ...]
        ) -> int:
            """The messages read for the run's first request; ``read`` then holds its next's."""
            read.clear()
            await invoker.chat(ModelRequest(tuple(head)))  # the run so far
            first = len(read)
            read.clear()
            await invoker.chat(ModelRequest((*head, *new)))  # its next turn
            return first

        firsts[dropped] = asyncio.run(turns(invoker, head, new))
        sent = model.requests[1].messages
        assert len(sent) < 100 and sent[-len(new) :] == new
        kept = {id(m) for m in sent}
        dropped_read = {id(m) for m in read} & ({id(h) for h in head} - kept)
        counts[dropped] = len(read)
        # of what it drops it reads at most the one unit the budget stopped at
        assert len(dropped_read) <= 4
    assert counts[100] == counts[1_000] > 0
    assert firsts[100] == firsts[1_000] > 0  # the run's first request too (issue 22)
