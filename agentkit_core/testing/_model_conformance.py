"""The Model conformance suite: what every :class:`~agentkit_core.plugin.Model` must do.

A provider plugin's test subclasses :class:`ModelConformance` and builds, for each call the
suite makes, a model that plays one scenario (the suite sends the request in
``request_for(scenario)``; ``stream`` says whether it will call ``stream()`` or ``request()``,
so a wire-level mock can serve the JSON or the SSE form of the same answer)::

    class TestMyModelConformance(ModelConformance):
        @pytest.fixture(autouse=True)
        def _wire(self, server):  # any fixture: pytest binds it to the test's instance
            self.server = server

        async def make_model(self, scenario: str, *, stream: bool) -> Model:
            self.server.play(RECORDED[scenario, stream])
            return MyModel(base_url=self.server.url)

Scenarios: ``"text"`` (answers with text), ``"tool_calls"`` (calls both offered tools in one
turn, with JSON arguments), ``"structured"`` (answers JSON valid for the requested schema when
the model declares ``supports_structured_output``, else an ordinary answer), ``"error"``
(the provider fails for good). A model that cannot play one leaves it out of ``scenarios``,
and the tests of that scenario are not collected. ``"reasoning"`` (reasons, then answers
text) is played only by a model that adds it to ``scenarios``: not every model reasons.
``"echoed_key"``, for a model that sends an API key (add it to ``scenarios``): the model is
built with ``api_key=self.echoed_key`` and the server fails with an error body quoting the key,
as a proxy echoing the request's headers does; the key must show in no error, repr or cause.
Needs no pytest itself.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import ClassVar
from typing import TypeVar

from .._errors import ConfigError
from .._errors import ProviderError
from .._messages import Message
from .._messages import ToolCall
from .._messages import Usage
from .._models import Model
from .._models import ModelRequest
from .._models import ModelResponse
from .._models import OutputSchema
from .._models import StreamEvent
from .._models import ToolSpec
from .._session_state import REASONING

#: The scenarios a subclass plays unless it says otherwise.
SCENARIOS = ("text", "tool_calls", "structured", "error")
#: Every scenario the suite knows: the default ones and those a subclass opts into.
KNOWN_SCENARIOS = (*SCENARIOS, "reasoning", "echoed_key")
#: The scenarios in which the provider fails: the tests of an answer pass over them.
_FAILING = ("error", "echoed_key")

_F = TypeVar("_F", bound=Callable[..., Awaitable[None]])

_PROMPT = (Message.system("You are terse."),)
_TOOLS = (
    ToolSpec(
        "get_weather",
        "The weather in a city.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    ToolSpec(
        "get_time",
        "The time in a time zone.",
        {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
    ),
)
_CITY = OutputSchema(
    "city_info",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"],
        "additionalProperties": False,
    },
)
_REQUESTS = {
    "text": ModelRequest(
        (*_PROMPT, Message.user("What is the capital of France?")), settings={"temperature": 0}
    ),
    "tool_calls": ModelRequest(
        (*_PROMPT, Message.user("Weather in Paris and the time in Rome, please.")), tools=_TOOLS
    ),
    "structured": ModelRequest(
        (*_PROMPT, Message.user("Paris: the city and its population.")), output=_CITY
    ),
    "error": ModelRequest((*_PROMPT, Message.user("Hello?")), settings={"temperature": 7}),
    "reasoning": ModelRequest((*_PROMPT, Message.user("What is 17 * 24? Think it through."))),
    "echoed_key": ModelRequest((*_PROMPT, Message.user("Hello?"))),
}


def _plays(scenario: str) -> Callable[[_F], _F]:
    """Mark a test as needing ``scenario``; subclasses that do not play it drop the test."""

    def mark(test: _F) -> _F:
        setattr(test, "_model_scenario", scenario)  # noqa: B010 - functions have no such slot
        return test

    return mark


def _type_errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Where ``value`` breaks the object/array/scalar ``type``s and ``required`` of ``schema``."""
    kinds: dict[str, type | tuple[type, ...]] = {
        "object": dict,
        "array": list,
        "string": str,
        "integer": int,
        "number": (int, float),
        "boolean": bool,
    }
    want = schema.get("type")
    if isinstance(want, str) and want in kinds:
        bad_bool = isinstance(value, bool) and want in ("integer", "number")
        if bad_bool or not isinstance(value, kinds[want]):
            return [f"{path}: expected {want}, got {value!r:.80}"]
    errors: list[str] = []
    if isinstance(value, dict):
        errors += [f"{path}: missing {k!r}" for k in schema.get("required", ()) if k not in value]
        for key, sub in (schema.get("properties") or {}).items():
            if key in value:
                errors += _type_errors(value[key], sub, f"{path}.{key}")
    return errors


class ModelConformance:
    """Contract tests for a ``agentkit_core.plugin.Model``; subclass, define ``make_model``."""

    #: The scenarios the model plays; the tests of the others are not collected.
    scenarios: ClassVar[tuple[str, ...]] = SCENARIOS
    #: The API key of the ``"echoed_key"`` scenario, which the server's error body quotes.
    echoed_key: ClassVar[str] = "sk-agentkit-conformance-echoed-0123456789"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        unknown = [s for s in cls.scenarios if s not in KNOWN_SCENARIOS]
        if unknown or "text" not in cls.scenarios:
            raise ConfigError(
                f"{cls.__name__}.scenarios = {cls.scenarios!r}: every model plays 'text', and "
                f"the known scenarios are {KNOWN_SCENARIOS!r}",
                value=cls.scenarios,
                source=f"{cls.__qualname__}.scenarios",
            )
        for name, test in vars(ModelConformance).items():
            scenario = getattr(test, "_model_scenario", None)
            if scenario is not None and scenario not in cls.scenarios:
                setattr(cls, name, None)  # pytest collects only callables
            elif scenario is not None and getattr(cls, name) is None:
                setattr(cls, name, test)  # a parent dropped it; this subclass plays it

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        """A fresh model that answers ``request_for(scenario)`` once, by ``stream()`` if set."""
        raise NotImplementedError(
            "define async make_model(scenario, *, stream) in the conformance subclass"
        )

    def request_for(self, scenario: str) -> ModelRequest:
        """The request the suite sends for ``scenario`` (a fresh deep copy each time)."""
        return copy.deepcopy(_REQUESTS[scenario])

    @property
    def _answering(self) -> tuple[str, ...]:
        """The scenarios the model plays in which it answers: all but those where it fails."""
        return tuple(s for s in self.scenarios if s not in _FAILING)

    # ------------------------------------------------------------------ calling the model

    async def _model(self, scenario: str, *, stream: bool) -> Model:
        model = await self.make_model(scenario, stream=stream)
        assert isinstance(model, Model), f"make_model({scenario!r}) gave {model!r}, not a Model"
        return model

    async def _close(self, model: Model) -> None:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()

    async def ask(self, scenario: str) -> tuple[Model, ModelResponse]:
        """The model made for ``scenario`` and what its ``request()`` returned."""
        model = await self._model(scenario, stream=False)
        try:
            response = await model.request(self.request_for(scenario))
        finally:
            await self._close(model)
        assert isinstance(response, ModelResponse), (
            f"{model.name}: request() returned {response!r}, not a ModelResponse"
        )
        return model, response

    async def request(self, scenario: str) -> ModelResponse:
        """What ``request()`` returns for ``scenario``."""
        return (await self.ask(scenario))[1]

    async def streamed(self, scenario: str) -> tuple[Model, list[StreamEvent]]:
        """The model made for ``scenario`` and every event its ``stream()`` yielded."""
        model = await self._model(scenario, stream=True)
        try:
            events = [event async for event in model.stream(self.request_for(scenario))]
        finally:
            await self._close(model)
        for event in events:
            assert isinstance(event, StreamEvent), f"{model.name}: stream() yielded {event!r}"
        return model, events

    async def stream(self, scenario: str) -> list[StreamEvent]:
        """Every event ``stream()`` yields for ``scenario``."""
        return (await self.streamed(scenario))[1]

    def _done(self, events: list[StreamEvent]) -> ModelResponse:
        done = [e for e in events if e.kind == "done"]
        assert len(done) == 1, f"stream() must yield exactly one 'done' event, got {len(done)}"
        assert events[-1].kind == "done", (
            f"the 'done' event must be last; the last was {events[-1].kind!r}"
        )
        response = done[0].response
        assert isinstance(response, ModelResponse), f"'done' carries {response!r}, no response"
        return response

    async def _error(self, call: Callable[[], Awaitable[object]], how: str) -> None:
        try:
            got = await call()
        except ProviderError as exc:
            assert exc.retryable is False, f"{how}: {exc!r} is retryable; this failure is final"
            assert str(exc), f"{how}: the ProviderError has no message"
            return
        raise AssertionError(f"{how} should raise ProviderError in the 'error' scenario: {got!r}")

    # ------------------------------------------------------------------ the contract

    async def test_name_is_a_non_empty_string(self) -> None:
        model, _ = await self.ask("text")
        assert isinstance(model.name, str) and model.name, f"name is {model.name!r}"

    async def test_request_returns_an_assistant_text(self) -> None:
        message = (await self.request("text")).message
        assert message.role == "assistant", f"the answer's role is {message.role!r}"
        assert message.text.strip(), f"the 'text' scenario answered no text: {message!r}"

    async def test_request_reports_usage_and_model(self) -> None:
        response = await self.request("text")
        usage = response.usage
        assert isinstance(usage, Usage), f"usage is {usage!r}, not a Usage"
        counts = (usage.input_tokens, usage.output_tokens, usage.requests)
        assert all(isinstance(n, int) and n >= 0 for n in counts), f"bad counts in {usage!r}"
        assert isinstance(response.model, str) and response.model, (
            f"the response should name the model that answered, got {response.model!r}"
        )

    async def test_stream_ends_with_exactly_one_done(self) -> None:
        for scenario in self._answering:
            self._done(await self.stream(scenario))

    async def test_stream_yields_only_model_event_kinds(self) -> None:
        kinds = {e.kind for s in self._answering for e in await self.stream(s)}
        known = {"text", "reasoning", "tool_call_delta", "tool_call", "partial", "done"}
        assert kinds <= known, (
            "a model stream yields text, reasoning, tool_call_delta, tool_call, partial and "
            f"done events, got {kinds}"
        )

    async def test_stream_text_deltas_join_to_the_final_text(self) -> None:
        for scenario in self._answering:
            events = await self.stream(scenario)
            joined = "".join(e.text for e in events if e.kind == "text")
            final = self._done(events).message.text
            assert joined == final, (
                f"{scenario!r}: the text deltas join to {joined!r}, the final text is {final!r}"
            )

    async def test_stream_reasoning_never_leaks_into_the_text(self) -> None:
        for scenario in self._answering:
            events = await self.stream(scenario)
            reasoning = "".join(e.text for e in events if e.kind == "reasoning").strip()
            text = "".join(e.text for e in events if e.kind == "text")
            final = self._done(events).message.text
            for where, shown in (("text deltas", text), ("final text", final)):
                assert not reasoning or reasoning not in shown, (
                    f"{scenario!r}: the reasoning deltas {reasoning!r:.120} are in the {where} "
                    f"{shown!r:.200}; reasoning streams as 'reasoning' events only"
                )

    async def test_stream_done_equals_request(self) -> None:
        for scenario in self._answering:
            whole = await self.request(scenario)
            streamed = self._done(await self.stream(scenario))
            assert streamed.message == whole.message, (
                f"{scenario!r}: stream() ended with {streamed.message!r}, "
                f"request() returned {whole.message!r}"
            )
            assert streamed.finish_reason == whole.finish_reason, (
                f"{scenario!r}: finish_reason {streamed.finish_reason!r} streamed, "
                f"{whole.finish_reason!r} requested"
            )

    async def test_request_does_not_mutate_the_request(self) -> None:
        await self._unchanged(stream=False)

    async def test_stream_does_not_mutate_the_request(self) -> None:
        await self._unchanged(stream=True)

    async def _unchanged(self, *, stream: bool) -> None:
        for scenario in self._answering:
            model = await self._model(scenario, stream=stream)
            sent = self.request_for(scenario)
            before = copy.deepcopy(sent)
            try:
                if stream:
                    _ = [e async for e in model.stream(sent)]
                else:
                    await model.request(sent)
            finally:
                await self._close(model)
            how = "stream()" if stream else "request()"
            assert sent == before, f"{how} changed the {scenario!r} request: {sent!r}"
            assert sent.metadata == before.metadata, f"{how} changed the request's metadata"
            assert [m.metadata for m in sent.messages] == [m.metadata for m in before.messages], (
                f"{how} changed a message's metadata in the {scenario!r} request"
            )

    @_plays("tool_calls")
    async def test_tool_calls_are_parallel_with_unique_ids_and_json_arguments(self) -> None:
        message = (await self.request("tool_calls")).message
        calls = message.tool_calls
        assert len(calls) >= 2, f"'tool_calls' should call both tools in one turn: {message!r}"
        offered = {t.name for t in self.request_for("tool_calls").tools}
        ids = [c.id for c in calls]
        assert all(ids) and len(set(ids)) == len(ids), f"tool call ids not unique: {ids}"
        for call in calls:
            assert call.name in offered, f"{call.name!r} was not offered (offered: {offered})"
            try:
                arguments = json.loads(call.arguments)
            except ValueError as exc:
                raise AssertionError(f"{call!r}: arguments are not JSON ({exc})") from exc
            assert isinstance(arguments, dict), f"{call!r}: arguments are not a JSON object"

    @_plays("tool_calls")
    async def test_stream_tool_call_events_equal_the_final_calls(self) -> None:
        events = await self.stream("tool_calls")
        streamed = [e.tool_call for e in events if e.kind == "tool_call"]
        final = list(self._done(events).message.tool_calls)
        assert final, "the streamed 'tool_calls' answer has no tool calls"
        assert streamed == final, f"'tool_call' events {streamed!r} but the final calls {final!r}"

    async def test_stream_tool_call_deltas_join_to_their_call(self) -> None:
        for scenario in self._answering:
            _check_call_deltas(scenario, await self.stream(scenario))

    @_plays("structured")
    async def test_structured_answer_fits_the_schema(self) -> None:
        model, response = await self.ask("structured")
        message = response.message
        if getattr(model, "supports_structured_output", False) is not True:
            # The agent puts the schema in the prompt; the model must still just answer.
            assert message.text.strip() or message.tool_calls, f"no answer: {message!r}"
            return
        schema = self.request_for("structured").output
        assert schema is not None
        try:
            value = json.loads(message.text)
        except ValueError as exc:
            raise AssertionError(
                f"the structured answer is not JSON ({exc}): {message.text!r}"
            ) from exc
        errors = _type_errors(value, schema.schema)
        assert not errors, f"the structured answer {value!r} breaks the schema: {errors}"

    @_plays("reasoning")
    async def test_stream_reasoning_deltas_come_with_the_answer(self) -> None:
        model, events = await self.streamed("reasoning")
        deltas = [e for e in events if e.kind == "reasoning"]
        assert "".join(e.text for e in deltas).strip(), (
            f"{model.name}: the 'reasoning' scenario streamed no 'reasoning' event with text"
        )
        for event in deltas:
            bare = event.tool_call is None and event.partial is None and event.response is None
            assert bare, f"a 'reasoning' event carries only text: {event!r}"
        first_text = next((i for i, e in enumerate(events) if e.kind == "text"), len(events))
        assert events.index(deltas[0]) < first_text, (
            "the 'reasoning' scenario's model reasons before it answers: its first reasoning "
            "delta should come before its first text delta"
        )
        assert self._done(events).message.text.strip(), "the 'reasoning' scenario has no answer"

    @_plays("reasoning")
    async def test_reasoning_is_kept_on_the_message_under_the_model_s_name(self) -> None:
        model, response = await self.ask("reasoning")
        streamed_model, events = await self.streamed("reasoning")
        for how, name, message in (
            ("request()", model.name, response.message),
            ("stream()", streamed_model.name, self._done(events).message),
        ):
            kept = message.metadata.get(REASONING)
            assert isinstance(kept, dict) and kept.get("model") == name, (
                f"{how}: the answer's metadata[{REASONING!r}] should be a dict whose 'model' is "
                f"{name!r} (so the reasoning goes back to this model only), got {kept!r:.200}"
            )

    @_plays("echoed_key")
    async def test_an_api_key_the_server_echoes_shows_in_no_error(self) -> None:
        import traceback

        for stream in (False, True):
            model = await self._model("echoed_key", stream=stream)
            try:
                if stream:
                    got: object = [e async for e in model.stream(self.request_for("echoed_key"))]
                else:
                    got = await model.request(self.request_for("echoed_key"))
            except ProviderError as exc:
                shown = "".join(traceback.format_exception(exc)) + repr(exc) + repr(vars(exc))
                assert self.echoed_key not in shown, (
                    f"{model.name}: the API key the server echoed shows in the error (its "
                    f"message, a field or its cause); raise hide_secret(error, key, cause)"
                )
            else:
                raise AssertionError(f"'echoed_key' should raise ProviderError, got {got!r}")
            finally:
                await self._close(model)
            assert self.echoed_key not in repr(model), f"{model.name}: its repr shows the key"

    @_plays("error")
    async def test_error_from_request_is_a_final_provider_error(self) -> None:
        model = await self._model("error", stream=False)
        try:
            await self._error(lambda: model.request(self.request_for("error")), "request()")
        finally:
            await self._close(model)

    @_plays("error")
    async def test_error_from_stream_is_a_final_provider_error(self) -> None:
        model = await self._model("error", stream=True)

        async def drain() -> list[StreamEvent]:
            return [e async for e in model.stream(self.request_for("error"))]

        try:
            await self._error(drain, "stream()")
        finally:
            await self._close(model)


def _check_call_deltas(scenario: str, events: list[StreamEvent]) -> None:
    """Check each call's ``"tool_call_delta"`` events (a model may send none).

    They come before its ``"tool_call"``, carry its id and name, and their fragments join to
    its arguments.
    """
    told: dict[str, list[ToolCall]] = {}
    completed: set[str] = set()
    for event in events:
        call = event.tool_call
        if event.kind == "tool_call_delta":
            assert call is not None and call.id, f"{scenario!r}: a delta names no call: {event!r}"
            assert call.id not in completed, f"{scenario!r}: a delta after its call: {event!r}"
            told.setdefault(call.id, []).append(call)
        elif event.kind == "tool_call" and call is not None:
            completed.add(call.id)
            deltas = told.get(call.id)
            if deltas:
                names = {d.name for d in deltas}
                assert names == {call.name}, f"{scenario!r}: deltas of {call!r} name {names}"
                joined = "".join(d.arguments for d in deltas)
                assert joined == call.arguments, (
                    f"{scenario!r}: the deltas of {call.id!r} join to {joined!r}, its arguments "
                    f"are {call.arguments!r}"
                )
    assert set(told) <= completed, f"{scenario!r}: deltas of calls never completed: {told}"
