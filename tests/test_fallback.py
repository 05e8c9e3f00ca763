"""The fallback chain: which errors move it on, what a stream may do, what is recorded."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import FallbackModel
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core.plugin import FallbackExhausted
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import resolve_model
from agentkit_core.plugin import retry
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx

REQUEST = ModelRequest((Message.user("hi"),))
BUSY = ProviderError("529 overloaded", retryable=True)
BAD = ProviderError("400 invalid request", retryable=False)


def quick(attempts: int = 1, **options: float) -> object:
    """A retry policy that does not wait (tests measure attempts, not the clock)."""
    return retry(attempts, base_delay=0.0, max_delay=0.0, rng=random.Random(0), **options)


def chain(*models: ScriptedModel, attempts: int = 1) -> FallbackModel:
    return FallbackModel(models, retry=quick(attempts))  # type: ignore[arg-type]


async def test_a_busy_model_hands_over_after_its_own_retries() -> None:
    a = ScriptedModel([BUSY, BUSY], name="a:one")
    b = ScriptedModel(["from b"], name="b:two")
    response = await chain(a, b, attempts=2).request(REQUEST)
    assert response.message.text == "from b" and response.answered_by == "b:two"
    assert len(a.requests) == 2 and len(b.requests) == 1


async def test_an_error_every_model_would_give_is_not_handed_over() -> None:
    a = ScriptedModel([BAD], name="a:one")
    b = ScriptedModel(["never"], name="b:two")
    with pytest.raises(ProviderError, match="400 invalid request"):
        await chain(a, b).request(REQUEST)
    assert b.requests == []


async def test_what_moves_the_chain_on_is_configurable() -> None:
    a = ScriptedModel([BAD], name="a:one")
    b = ScriptedModel(["b answers"], name="b:two")
    model = FallbackModel([a, b], retry=quick(), fall_back_on=lambda exc: True)  # type: ignore[arg-type]
    assert (await model.request(REQUEST)).answered_by == "b:two"


async def test_when_every_model_fails_one_error_lists_each_last_error() -> None:
    a = ScriptedModel([BUSY], name="a:one")
    b = ScriptedModel([ProviderError("503 unavailable", retryable=True)], name="b:two")
    with pytest.raises(FallbackExhausted) as info:
        await chain(a, b).request(REQUEST)
    assert [name for name, _ in info.value.errors] == ["a:one", "b:two"]
    assert "a:one: 529 overloaded" in str(info.value) and "b:two: 503 unavailable" in str(
        info.value
    )
    assert not info.value.retryable  # each model's retries were its own


class Cut:
    """Streams one delta, then fails (a stream cut after its first delta)."""

    def __init__(self, name: str, before: bool = False) -> None:
        self.name = name
        self.before = before
        self.calls = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        raise AssertionError("streamed only")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        if not self.before:
            yield StreamEvent("text", text="Par")
        raise ProviderError("connection lost", retryable=True)


async def test_a_stream_falls_back_only_before_its_first_delta() -> None:
    b = ScriptedModel(["Paris"], name="b:two")
    early = chain(Cut("a:one", before=True), b)  # type: ignore[arg-type]
    events = [e async for e in early.stream(REQUEST)]
    assert events[-1].response is not None and events[-1].response.answered_by == "b:two"
    late = chain(Cut("a:one"), ScriptedModel(["never"], name="b:two"))  # type: ignore[arg-type]
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError, match="connection lost"):
        async for event in late.stream(REQUEST):
            seen.append(event)
    assert [e.text for e in seen] == ["Par"]


async def test_each_model_is_a_span_and_the_answer_names_its_model() -> None:
    a = ScriptedModel([BUSY], name="a:one")
    b = ScriptedModel(["from b"], name="b:two")
    ctx = make_test_ctx(chain(a, b))
    assert ctx.invoker is not None
    await ctx.invoker.chat(REQUEST)
    attempts = ctx.trace.find("model_attempt")
    assert [(s.attributes["model"], s.error is not None) for s in attempts] == [
        ("a:one", True),
        ("b:two", False),
    ]
    assert ctx.usage_by_model.keys() == {"b:two"} and ctx.usage.requests == 1


async def test_a_run_records_the_model_that_answered() -> None:
    a = ScriptedModel([BUSY], name="a:one")
    b = ScriptedModel(["done"], name="b:two")
    result = await Agent("x", chain(a, b), "", hooks=Hooks()).run("go")
    assert result.usage_by_model.keys() == {"b:two"}
    assert result.cost is None  # no price for b:two here: unknown, not zero


async def test_a_models_deadline_covers_its_attempts_then_the_next_model_answers() -> None:
    class Slow(ScriptedModel):
        async def request(self, request: ModelRequest) -> ModelResponse:
            await asyncio.sleep(5)
            raise AssertionError("past its deadline")

    b = ScriptedModel(["quick"], name="b:two")
    model = FallbackModel([Slow([], name="a:slow"), b], retry=quick(3, deadline=0.05))  # type: ignore[arg-type]
    response = await asyncio.wait_for(model.request(REQUEST), 2)
    assert response.answered_by == "b:two"


def test_a_list_or_a_comma_string_resolves_to_a_chain(pm) -> None:
    made = resolve_model(["test", "test"], manager=pm)
    assert isinstance(made, FallbackModel) and len(made.models) == 2
    assert isinstance(resolve_model("test, test", manager=pm), FallbackModel)


OUTCOMES = st.sampled_from(["ok", "busy", "bad"])


@settings(max_examples=150, deadline=None)
@given(
    patterns=st.lists(st.lists(OUTCOMES, min_size=1, max_size=4), min_size=1, max_size=4),
    attempts=st.integers(1, 3),
)
def test_over_random_failures_the_chain_keeps_its_rules(
    patterns: list[list[str]], attempts: int
) -> None:
    """Property: no model is called after a success, no hand-over follows a non-retryable
    error, and the attempts recorded are exactly the attempts made."""
    steps: dict[str, str | ProviderError] = {"ok": "answer", "busy": BUSY, "bad": BAD}
    models = [
        ScriptedModel([steps[o] for o in pattern] + ["spare"] * attempts, name=f"m{i}:x")
        for i, pattern in enumerate(patterns)
    ]
    ctx = make_test_ctx(chain(*models, attempts=attempts))
    assert ctx.invoker is not None
    outcome: str | ProviderError | None
    try:
        response = asyncio.run(ctx.invoker.chat(REQUEST))
        outcome = response.answered_by
    except ProviderError as exc:
        outcome = exc
    # What the rules say should have happened, model by model.
    expected_calls: list[int] = []
    expected: object = None
    for i, pattern in enumerate(patterns):
        script = pattern + ["ok"] * attempts
        calls = 0
        for step in script[:attempts]:
            calls += 1
            if step != "busy":
                break
        expected_calls.append(calls)
        last = script[calls - 1]
        if last == "ok":
            expected = f"m{i}:x"
            break
        if last == "bad":
            expected = "bad"
            break
    else:
        expected = "exhausted"
    assert [len(m.requests) for m in models] == expected_calls + [0] * (
        len(models) - len(expected_calls)
    )
    if expected == "bad":
        assert outcome is BAD
    elif expected == "exhausted":
        assert isinstance(outcome, FallbackExhausted)
    else:
        assert outcome == expected
    attempts_seen = [s.attributes["model"] for s in ctx.trace.find("model_attempt")]
    assert attempts_seen == [f"m{i}:x" for i in range(len(expected_calls))]


def test_the_command_line_and_the_file_take_a_chain(tmp_path: Path) -> None:
    """``--model a,b`` and ``[kit] model = [...]`` both build a chain; the run's closing line
    gives its tokens and says its cost is unknown (the test model has no price)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "agentkit_core", "run", "hi", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)

    proc = run("--model", "test,test")
    assert proc.returncode == 0, proc.stderr
    assert "model calls, " in proc.stderr and "cost unknown" in proc.stderr
    (tmp_path / "agentkit.toml").write_text('[kit]\nmodel = ["test", "test"]\n')
    proc = run()
    assert proc.returncode == 0 and "demo run" not in proc.stderr, proc.stderr
    (tmp_path / "agentkit.toml").write_text("[kit]\nmodel = []\n")
    assert "a model string, or a list of them" in run().stderr
