"""Test models that need no network: ScriptedModel replays a given list of answers.

TestModel lives in core (``model="test"`` and the CLI's demo run use it) and is re-exported
from ``agentkit_core.testing``.
"""

from __future__ import annotations

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
from .._tokens import estimate_tokens

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
