"""Test models that need no network: ScriptedModel replays a given list of answers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterable

from .._errors import ProviderError
from .._messages import Message
from .._messages import ToolCall
from .._messages import Usage
from .._models import ModelRequest
from .._models import ModelResponse
from .._models import StreamEvent
from ..tokens import estimate_tokens

#: One scripted step: an answer text, an assistant message, a response, an exception to raise,
#: or a function of the request returning any of those.
Step = str | Message | ModelResponse | BaseException | Callable[[ModelRequest], object]


class ScriptedModel:
    """Replays ``steps`` in order, one per request, and records every request it received.

    Running past the end of the script raises a ``ProviderError`` naming how many steps it had,
    so a test that makes one call too many fails loudly.
    """

    def __init__(self, steps: Iterable[Step], *, name: str = "scripted") -> None:
        self.steps = list(steps)
        self.name = name
        self.requests: list[ModelRequest] = []

    def _next(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        index = len(self.requests) - 1
        if index >= len(self.steps):
            raise ProviderError(
                f"ScriptedModel ran out of steps: request {index + 1} but the script has "
                f"{len(self.steps)}"
            )
        step: object = self.steps[index]
        if callable(step) and not isinstance(step, BaseException):
            step = step(request)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, ModelResponse):
            return step
        message = step if isinstance(step, Message) else Message.assistant(str(step))
        usage = Usage(estimate_tokens(request.messages), estimate_tokens([message]), 1)
        return ModelResponse(
            message, usage, "tool_calls" if message.tool_calls else "stop", self.name
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        return self._next(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = self._next(request)
        text = response.message.text
        for i in range(0, len(text), 8):
            yield StreamEvent("text", text=text[i : i + 8])
        for call in response.message.tool_calls:
            yield StreamEvent("tool_call", tool_call=call)
        yield StreamEvent("done", response=response)


def tool_call(name: str, arguments: str = "{}", id: str | None = None) -> ToolCall:
    """A ToolCall for scripts; the id defaults to ``call_<name>``."""
    return ToolCall(id or f"call_{name}", name, arguments)


class TestModel:
    """Calls each offered tool once with arguments valid for its schema, then answers.

    The tools not yet called in the transcript are all called in one turn (in parallel);
    once every tool has a result, it answers: with JSON valid for the requested output
    schema when there is one, otherwise with a line naming the tool results it saw.
    """

    __test__ = False  # not a pytest test class
    name = "test"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def _answer(self, request: ModelRequest) -> ModelResponse:
        from ._schema_values import example_value

        self.requests.append(request)
        called = {c.name for m in request.messages for c in m.tool_calls}
        todo = [t for t in request.tools if t.name not in called]
        if todo:
            calls = [
                ToolCall(f"call_{i}_{t.name}", t.name, json.dumps(example_value(t.parameters)))
                for i, t in enumerate(todo, start=len(called))
            ]
            message = Message.assistant("", calls)
        elif request.output is not None:
            message = Message.assistant(json.dumps(example_value(request.output.schema)))
        else:
            results = [m for m in request.messages if m.role == "tool"]
            names = ", ".join(str(m.name) for m in results)
            message = Message.assistant(
                f"TestModel answer after {len(results)} tool result(s)"
                + (f" ({names})" if names else "")
            )
        usage = Usage(estimate_tokens(request.messages), estimate_tokens([message]), 1)
        return ModelResponse(message, usage, "tool_calls" if todo else "stop", self.name)

    async def request(self, request: ModelRequest) -> ModelResponse:
        return self._answer(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = self._answer(request)
        if response.message.text:
            yield StreamEvent("text", text=response.message.text)
        for call in response.message.tool_calls:
            yield StreamEvent("tool_call", tool_call=call)
        yield StreamEvent("done", response=response)
