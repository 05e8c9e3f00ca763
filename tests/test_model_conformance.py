"""The Model conformance suite run against the two built-in test models, and shown able to fail."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import Model
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent
from agentkit_core.testing import ModelConformance
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import TestModel
from agentkit_core.testing import tool_call
from agentkit_core.testing._model_conformance import SCENARIOS

CALLS = Message.assistant(
    "",
    [
        tool_call("get_weather", json.dumps({"city": "Paris"}), id="call_1"),
        tool_call("get_time", json.dumps({"zone": "Europe/Rome"}), id="call_2"),
    ],
)
STEPS: dict[str, Any] = {
    "text": "The capital of France is Paris.",
    "tool_calls": CALLS,
    "structured": json.dumps({"city": "Paris", "population": 2102650}),
    "error": ProviderError("scripted: invalid request", retryable=False),
}


def scripted(scenario: str) -> ScriptedModel:
    model = ScriptedModel([STEPS[scenario]])
    model.supports_structured_output = True  # type: ignore[attr-defined]
    return model


class TestScriptedModelConformance(ModelConformance):
    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        return scripted(scenario)


class TestTestModelConformance(ModelConformance):
    scenarios = ("text", "tool_calls", "structured")  # TestModel never fails

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        model = TestModel()
        model.supports_structured_output = True  # type: ignore[attr-defined]
        return model


class Told(ScriptedModel):
    """Tells each call by the deltas ``tell(call)`` makes, before its ``"tool_call"`` (after it
    with ``late``)."""

    def __init__(
        self, steps: list[Any], tell: Callable[[ToolCall], list[ToolCall]], *, late: bool = False
    ) -> None:
        super().__init__(steps)
        self.tell, self.late = tell, late

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in super().stream(request):
            if event.kind != "tool_call" or event.tool_call is None:
                yield event
                continue
            deltas = [
                StreamEvent("tool_call_delta", tool_call=c) for c in self.tell(event.tool_call)
            ]
            for told in [event, *deltas] if self.late else [*deltas, event]:
                yield told


def in_halves(call: ToolCall) -> list[ToolCall]:
    """A call as a model that streams it tells it: its id and name, then its arguments in two."""
    half = len(call.arguments) // 2
    return [replace(call, arguments=a) for a in ("", call.arguments[:half], call.arguments[half:])]


class TestToldModelConformance(ModelConformance):
    """A model that tells its calls by ``"tool_call_delta"`` events."""

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        model = Told([STEPS[scenario]], in_halves)
        model.supports_structured_output = True  # type: ignore[attr-defined]
        return model


THOUGHT = "17 * 24 is 17 * 20 plus 17 * 4: 340 + 68."


class Reasoning(ScriptedModel):
    """Streams its reasoning as 'reasoning' deltas before its answer; keeps it on the message."""

    def __init__(self, answer: str = "408.") -> None:
        message = Message("assistant", answer, metadata={REASONING: {"thought": THOUGHT}})
        super().__init__([message])

    def _next(self, request: ModelRequest) -> ModelResponse:
        response = super()._next(request)
        metadata = {REASONING: {**response.message.metadata[REASONING], "model": self.name}}
        return replace(response, message=replace(response.message, metadata=metadata))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        events = [event async for event in super().stream(request)]
        for event in self.reasoning_events(events[-1].response):
            yield event
        for event in events:
            yield event

    def reasoning_events(self, response: Any) -> list[StreamEvent]:
        thought = response.message.metadata[REASONING]["thought"]
        return [
            StreamEvent("reasoning", text=thought[i : i + 5]) for i in range(0, len(thought), 5)
        ]


class TestReasoningModelConformance(ModelConformance):
    scenarios = ("text", "reasoning")

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        return Reasoning() if scenario == "reasoning" else scripted(scenario)


def test_reasoning_is_played_only_when_asked_for() -> None:
    assert TestScriptedModelConformance.test_stream_reasoning_deltas_come_with_the_answer is None
    assert callable(TestReasoningModelConformance.test_stream_reasoning_deltas_come_with_the_answer)


def test_unplayed_scenarios_are_not_collected() -> None:
    assert TestTestModelConformance.test_error_from_request_is_a_final_provider_error is None
    assert callable(TestScriptedModelConformance.test_error_from_request_is_a_final_provider_error)


def test_a_subclass_playing_more_gets_the_dropped_tests_back() -> None:
    class Fails(TestTestModelConformance):
        scenarios = ("text", "error")

    assert Fails.test_tool_calls_are_parallel_with_unique_ids_and_json_arguments is None
    assert callable(Fails.test_error_from_stream_is_a_final_provider_error)


def test_unknown_scenario_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"Bad.scenarios = \('text', 'jokes'\)"):

        class Bad(ModelConformance):
            scenarios = ("text", "jokes")


# ---------------------------------------------------------------- the suite can fail


class NoDone(ScriptedModel):
    """Streams the answer but never says it is done."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in super().stream(request):
            if event.kind != "done":
                yield event


class Retryable(ScriptedModel):
    """Fails with a retryable error where the failure is final."""

    def __init__(self) -> None:
        super().__init__([ProviderError("scripted: bad request", retryable=True)] * 2)


class Mutating(ScriptedModel):
    async def request(self, request: ModelRequest) -> Any:
        request.settings["seen"] = True
        return await super().request(request)


class DupIds(ScriptedModel):
    def __init__(self) -> None:
        calls = [tool_call("get_weather", '{"city": "Paris"}', id="same")] * 2
        super().__init__([Message.assistant("", calls)])


class StreamDiffers(ScriptedModel):
    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in super().stream(request):
            if event.kind == "text":
                event = StreamEvent("text", text=event.text.upper())
            yield event


class LeaksReasoning(Reasoning):
    """Streams its reasoning as text too: the answer's text then carries the reasoning."""

    def __init__(self) -> None:
        super().__init__(THOUGHT + " 408.")


class ReasonsAfterward(Reasoning):
    """Streams its reasoning after the answer's text."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        events = [event async for event in ScriptedModel.stream(self, request)]
        reasoning = self.reasoning_events(events[-1].response)
        for event in [*events[:-1], *reasoning, events[-1]]:
            yield event


class ReasoningUnnamed(Reasoning):
    """Keeps its reasoning without naming the model that wrote it."""

    def _next(self, request: ModelRequest) -> ModelResponse:
        return ScriptedModel._next(self, request)


class DoneDiffers(ScriptedModel):
    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in super().stream(request):
            if event.kind == "done":
                event = StreamEvent("done", response=replace(event.response, finish_reason="x"))
            yield event


def suite(factory: Any, scenarios: tuple[str, ...] = SCENARIOS) -> ModelConformance:
    played = scenarios

    class Broken(ModelConformance):
        scenarios = played

        async def make_model(self, scenario: str, *, stream: bool) -> Model:
            made: Model = factory(scenario)
            return made

    return Broken()


@pytest.mark.parametrize(
    ("factory", "test", "message"),
    [
        (lambda s: NoDone([STEPS[s]]), "test_stream_ends_with_exactly_one_done", "exactly one"),
        (lambda s: Retryable(), "test_error_from_request_is_a_final_provider_error", "retryable"),
        (lambda s: Retryable(), "test_error_from_stream_is_a_final_provider_error", "retryable"),
        (
            lambda s: ScriptedModel(["ok"]),
            "test_error_from_request_is_a_final_provider_error",
            "should raise ProviderError",
        ),
        (lambda s: Mutating([STEPS[s]]), "test_request_does_not_mutate_the_request", "changed"),
        (
            lambda s: DupIds(),
            "test_tool_calls_are_parallel_with_unique_ids_and_json_arguments",
            "not unique",
        ),
        (
            lambda s: StreamDiffers([STEPS[s]]),
            "test_stream_text_deltas_join_to_the_final_text",
            "text deltas join",
        ),
        (lambda s: DoneDiffers([STEPS[s]]), "test_stream_done_equals_request", "finish_reason"),
        (
            lambda s: Told([STEPS[s]], lambda c: [replace(c, arguments=c.arguments[1:])]),
            "test_stream_tool_call_deltas_join_to_their_call",
            "join to",
        ),
        (
            lambda s: Told([STEPS[s]], in_halves, late=True),
            "test_stream_tool_call_deltas_join_to_their_call",
            "a delta after its call",
        ),
        (
            lambda s: Told([STEPS[s]], lambda c: [replace(c, name="other")]),
            "test_stream_tool_call_deltas_join_to_their_call",
            "name {'other'}",
        ),
        (
            lambda s: Told([STEPS[s]], lambda c: [replace(c, id=c.id + "_ghost")]),
            "test_stream_tool_call_deltas_join_to_their_call",
            "never completed",
        ),
        (
            lambda s: ScriptedModel([STEPS["text"]]),
            "test_structured_answer_fits_the_schema",
            "not JSON",
        ),
        (
            lambda s: ScriptedModel([STEPS[s]], name=""),
            "test_name_is_a_non_empty_string",
            "name is ''",
        ),
    ],
)
async def test_a_broken_model_fails_the_right_check(factory: Any, test: str, message: str) -> None:
    def with_structured(s: str) -> Any:
        model = factory(s)
        model.supports_structured_output = True
        return model

    with pytest.raises(AssertionError, match=message):
        await getattr(suite(with_structured), test)()


@pytest.mark.parametrize(
    ("factory", "test", "message"),
    [
        (
            lambda s: LeaksReasoning(),
            "test_stream_reasoning_never_leaks_into_the_text",
            "are in the text deltas",
        ),
        (
            lambda s: ReasonsAfterward(),
            "test_stream_reasoning_deltas_come_with_the_answer",
            "before its first text delta",
        ),
        (
            lambda s: ScriptedModel(["408."]),
            "test_stream_reasoning_deltas_come_with_the_answer",
            "no 'reasoning' event",
        ),
        (
            lambda s: ReasoningUnnamed(),
            "test_reasoning_is_kept_on_the_message_under_the_model_s_name",
            "whose 'model' is 'scripted'",
        ),
    ],
)
async def test_a_model_that_reasons_wrongly_fails_the_right_check(
    factory: Any, test: str, message: str
) -> None:
    with pytest.raises(AssertionError, match=message):
        await getattr(suite(factory, ("text", "reasoning")), test)()
