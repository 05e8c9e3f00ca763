"""The invoker's chain: tracing, metering, retry, budgets; the run context's slots."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Budget
from agentkit_core import BudgetExceeded
from agentkit_core import ConfigError
from agentkit_core import ElicitationError
from agentkit_core import Message
from agentkit_core import ModelDeadlineExceeded
from agentkit_core import ProviderError
from agentkit_core import RunContext
from agentkit_core import Usage
from agentkit_core.plugin import DEFAULT_MODEL_DEADLINE
from agentkit_core.plugin import Invoker
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import default_middlewares
from agentkit_core.plugin import metering
from agentkit_core.plugin import retry
from agentkit_core.plugin import tracing
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import make_test_ctx

REQUEST = ModelRequest((Message.user("hi"),))


async def test_tracing_and_metering_record_each_call() -> None:
    ctx = make_test_ctx(ScriptedModel(["a", "b"]))
    assert ctx.invoker is not None
    await ctx.invoker.chat(REQUEST)
    await ctx.invoker.chat(REQUEST)
    spans = ctx.trace.find("model_call")
    assert len(spans) == 2 and spans[0].attributes["model"] == "scripted"
    assert spans[0].duration is not None and spans[0].to_dict()["name"] == "model_call"
    assert ctx.usage.requests == 2 and ctx.usage.input_tokens > 0


async def test_retry_retries_retryable_errors_then_succeeds() -> None:
    flaky = ProviderError("overloaded", retryable=True, retry_after=0.05)
    model = ScriptedModel([flaky, flaky, "ok"])
    ctx = make_test_ctx(model, middlewares=[tracing(), metering(), retry(3, base_delay=0.01)])
    assert ctx.invoker is not None
    started = time.monotonic()
    response = await ctx.invoker.chat(REQUEST)
    assert response.message.text == "ok" and len(model.requests) == 3
    assert time.monotonic() - started >= 0.1  # Retry-After honoured on both retries
    assert ctx.trace.find("model_call")[0].attributes["retries"] == 2
    assert ctx.usage.requests == 1  # failed attempts are not metered


async def test_retry_gives_up_and_never_retries_a_permanent_error() -> None:
    model = ScriptedModel([ProviderError("bad request")])
    ctx = make_test_ctx(model, middlewares=[retry(5, base_delay=0.01)])
    assert ctx.invoker is not None
    with pytest.raises(ProviderError, match="bad request"):
        await ctx.invoker.chat(REQUEST)
    assert len(model.requests) == 1
    again = ScriptedModel([ProviderError("busy", retryable=True)] * 2)
    ctx = make_test_ctx(again, middlewares=[retry(2, base_delay=0.01)])
    assert ctx.invoker is not None
    with pytest.raises(ProviderError, match="busy"):
        await ctx.invoker.chat(REQUEST)
    assert len(again.requests) == 2
    with pytest.raises(ConfigError, match="at least one attempt"):
        retry(0)


async def test_retry_gives_up_when_the_provider_asks_for_longer_than_the_cap() -> None:
    day = ProviderError("rate limited", retryable=True, retry_after=86400)
    model = ScriptedModel([day, "ok"])
    ctx = make_test_ctx(model, middlewares=[retry(3, base_delay=0.01, max_delay=0.5)])
    assert ctx.invoker is not None
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"asked to wait 86400 s .*max_delay=0\.5") as info:
        await ctx.invoker.chat(REQUEST)
    assert time.monotonic() - started < 0.4  # no wait at all: giving up is immediate
    assert len(model.requests) == 1
    assert info.value.__cause__ is day and not info.value.retryable
    assert info.value.retry_after == 86400
    # a Retry-After within the cap is honoured in full, not shortened
    short = ScriptedModel([ProviderError("busy", retryable=True, retry_after=0.3), "ok"])
    ctx = make_test_ctx(short, middlewares=[retry(3, base_delay=0.01, max_delay=0.5)])
    assert ctx.invoker is not None
    started = time.monotonic()
    assert (await ctx.invoker.chat(REQUEST)).message.text == "ok"
    assert time.monotonic() - started >= 0.3


@settings(max_examples=30, deadline=None)
@given(st.floats(0, 0.04), st.floats(0.001, 0.04))
async def test_retry_after_is_waited_in_full_or_refused_at_once(
    retry_after: float, max_delay: float
) -> None:
    model = ScriptedModel([ProviderError("busy", retryable=True, retry_after=retry_after), "ok"])
    invoker = Invoker(model, [retry(2, base_delay=0.0, max_delay=max_delay)])
    started = time.monotonic()
    if retry_after > max_delay:
        with pytest.raises(ProviderError, match="giving up now"):
            await invoker.chat(REQUEST)
        assert len(model.requests) == 1
    else:
        assert (await invoker.chat(REQUEST)).message.text == "ok"
        assert time.monotonic() - started >= retry_after


class Hung:
    """A model that never answers (a provider that accepted the request and went silent)."""

    name = "hung"

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()

    async def request(self, request: ModelRequest) -> ModelResponse:
        try:
            await asyncio.Event().wait()
        finally:
            self.cancelled.set()
        raise AssertionError("unreachable")

    async def stream(self, request: ModelRequest) -> Any:
        await self.request(request)
        yield  # pragma: no cover


async def test_every_model_call_has_a_total_deadline() -> None:
    assert DEFAULT_MODEL_DEADLINE == 600.0
    assert Invoker(Hung()).deadline == DEFAULT_MODEL_DEADLINE
    hung = Hung()
    invoker = Invoker(hung, default_middlewares(), deadline=0.3)
    started = time.monotonic()
    with pytest.raises(ModelDeadlineExceeded, match=r"'hung' gave no answer within 0\.3 s") as info:
        await invoker.chat(REQUEST)
    assert 0.3 <= time.monotonic() - started < 2
    assert hung.cancelled.is_set()  # the call itself was cancelled, not left running
    assert isinstance(info.value, TimeoutError) and isinstance(info.value, ProviderError)
    assert not info.value.retryable


async def test_the_deadline_covers_retries_and_their_waits() -> None:
    busy = ProviderError("busy", retryable=True, retry_after=0.2)
    model = ScriptedModel([busy] * 10)
    invoker = Invoker(model, [retry(10, base_delay=0.2, max_delay=0.2)], deadline=0.5)
    with pytest.raises(ModelDeadlineExceeded):
        await invoker.chat(REQUEST)
    assert len(model.requests) <= 3


class Slow:
    """Answers after ``seconds``."""

    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def request(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(self.seconds)
        return ModelResponse(Message.assistant("late but in time"))

    async def stream(self, request: ModelRequest) -> Any:
        yield  # pragma: no cover


async def test_concurrent_calls_each_keep_their_own_deadline() -> None:
    # A long deadline armed first must not delay a shorter one started after it, and the
    # shorter one expiring must not touch a call still within its own.
    # (the long call ends at 2 s: the short one ending before 1.5 s was not held by it, with
    # room for a loaded machine's scheduling, where 0.4 s against 0.35 s had 0.25 s of it)
    patient = Invoker(Slow(2.0), deadline=30)
    hasty = Invoker(Hung(), deadline=0.1)
    started = time.monotonic()
    long_call = asyncio.ensure_future(patient.chat(REQUEST))
    await asyncio.sleep(0)
    with pytest.raises(ModelDeadlineExceeded):
        await hasty.chat(REQUEST)
    assert time.monotonic() - started < 1.5
    assert (await long_call).message.text == "late but in time"


async def test_calls_after_one_another_each_get_the_whole_deadline() -> None:
    # the first call's timer is still armed when the next starts: it must not end the next early
    # (each call takes 0.6 s of a 1 s deadline, so the first's timer fires 0.4 s into the second;
    # 0.4 s spare, not 0.1, as a loaded CI machine once stretched a 0.15 s call past 0.25 s)
    invoker = Invoker(Slow(0.6), deadline=1.0)
    for _ in range(3):
        assert (await invoker.chat(REQUEST)).message.text == "late but in time"
    with pytest.raises(ModelDeadlineExceeded):
        await Invoker(Hung(), deadline=0.1).chat(REQUEST)


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    call = asyncio.ensure_future(Invoker(Hung(), deadline=30).chat(REQUEST))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_a_task_goes_on_after_its_call_timed_out() -> None:
    # the deadline's cancellation is taken back: the task is not left marked as cancelling
    async def run() -> str:
        with pytest.raises(ModelDeadlineExceeded):
            await Invoker(Hung(), deadline=0.05).chat(REQUEST)
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0
        await asyncio.sleep(0.01)
        return "went on"

    assert await asyncio.ensure_future(run()) == "went on"


async def test_a_deadline_inside_another_call_ends_only_the_inner_call() -> None:
    inner = Invoker(Hung(), deadline=0.05)

    async def asks_another_model(request: ModelRequest, call_next: Any) -> ModelResponse:
        with pytest.raises(ModelDeadlineExceeded):
            await inner.chat(request)
        return await call_next(request)

    outer = Invoker(ScriptedModel(["outer answer"]), [asks_another_model], deadline=5)
    assert (await outer.chat(REQUEST)).message.text == "outer answer"


async def test_the_run_context_passes_its_deadline_on() -> None:
    ctx = RunContext(model=Hung(), model_deadline=0.2)
    assert ctx.invoker is not None and ctx.invoker.deadline == 0.2
    assert ctx.invoker_for(ScriptedModel(["x"])).deadline == 0.2  # a compactor's own model too
    assert ctx.invoker.bind(RunContext()).deadline == 0.2
    with pytest.raises(ConfigError, match=r"model_deadline=-1 .*positive number of seconds"):
        RunContext(model=Hung(), model_deadline=-1)
    assert RunContext(model=Hung(), model_deadline=None).invoker.deadline is None  # type: ignore[union-attr]


async def test_budget_is_enforced_by_metering() -> None:
    big = ModelResponse(Message.assistant("x"), Usage(900, 200, 1))
    ctx = make_test_ctx(ScriptedModel([big]), budget=Budget(max_tokens=1000))
    assert ctx.invoker is not None
    with pytest.raises(BudgetExceeded, match="used 1100 of 1000"):
        await ctx.invoker.chat(REQUEST)


async def test_a_budget_of_its_own_is_checked_though_it_sets_neither_limit() -> None:
    class Calls(Budget):
        def check(self, usage: Usage) -> None:
            if usage.requests > 1:
                raise BudgetExceeded(f"a second call ({usage.requests}) is one too many")

    ctx = make_test_ctx(ScriptedModel(["a", "b"]), budget=Calls())
    assert ctx.invoker is not None
    await ctx.invoker.chat(REQUEST)
    with pytest.raises(BudgetExceeded, match="one too many") as info:
        await ctx.invoker.chat(REQUEST)
    assert info.value.run_id == ctx.run_id


async def test_middleware_order_first_is_outermost() -> None:
    order: list[str] = []

    def named(name: str) -> Any:
        async def mw(request: ModelRequest, call_next: Any) -> ModelResponse:
            order.append(f"{name}>")
            response = await call_next(request)
            order.append(f"<{name}")
            return response

        return mw

    ctx = make_test_ctx(ScriptedModel(["x"]), middlewares=[named("outer"), named("inner")])
    assert ctx.invoker is not None
    await ctx.invoker.chat(REQUEST)
    assert order == ["outer>", "inner>", "<inner", "<outer"]


def test_scratchpad_refuses_what_json_cannot_carry() -> None:
    ctx = make_test_ctx()
    ctx.scratchpad["ok"] = {"n": [1, 2]}
    with pytest.raises(ConfigError, match=r"scratchpad\['live'\] must be JSON-serializable"):
        ctx.scratchpad["live"] = object()
    assert "live" not in ctx.scratchpad


async def test_elicit_asks_a_person_and_a_secret_answer_taints_the_run() -> None:
    asked: list[tuple[str, bool]] = []

    async def person(question: str, schema: Any, secret: bool) -> str:
        asked.append((question, secret))
        return "123456"

    ctx = make_test_ctx(elicitor=person)
    assert await ctx.elicit("Which region?") == "123456"
    assert not ctx.secret_tainted
    assert await ctx.elicit("One-time code?", secret=True) == "123456"
    assert ctx.secret_tainted and asked[1] == ("One-time code?", True)
    with pytest.raises(ElicitationError, match="no elicitor"):
        await make_test_ctx().elicit("anyone?")


async def test_invoker_for_another_model_keeps_the_chain_and_bills_the_run() -> None:
    ctx = make_test_ctx(ScriptedModel(["main"]))
    assert ctx.invoker_for() is ctx.invoker
    side = ScriptedModel(["side answer"], name="side")
    invoker = ctx.invoker_for(side)
    response = await invoker.chat(ModelRequest((Message.user("summarize"),)))
    assert response.message.text == "side answer"
    assert len(side.requests) == 1 and side.requests[0].ctx is ctx
    assert ctx.usage.requests == 1  # metering of the run's chain counted it
    assert len(ctx.trace.find("model_call")) == 1


def test_invoker_for_with_nothing_to_call_names_the_caller() -> None:
    with pytest.raises(ConfigError, match=r"the scorer has no model to call.*pass scorer_model="):
        RunContext().invoker_for(source="the scorer", hint="pass scorer_model=")


def test_stamping_who_answered_keeps_every_other_field() -> None:
    """``answered`` lists ``ModelResponse``'s fields itself (it is five times ``replace``)."""
    from dataclasses import fields
    from dataclasses import replace

    from agentkit_core._models import answered

    names = [f.name for f in fields(ModelResponse)]
    assert names == ["message", "usage", "finish_reason", "model", "output", "answered_by"], (
        "ModelResponse's fields changed: list them in agentkit_core._models.answered"
    )
    response = ModelResponse(Message.assistant("x"), Usage(1, 2, 1), "stop", "m", {"k": 1})
    stamped, expected = answered(response, "p:m"), replace(response, answered_by="p:m")
    assert [getattr(stamped, n) for n in names] == [getattr(expected, n) for n in names]
