"""TestModel: the built-in model that needs no key and no network.

Chosen only by name (``model="test"``) or by the CLI's labelled demo run; never as a silent
default. It calls every offered tool with arguments made up from the tool's schema, so it is
for demos and tests, not for agents whose tools have effects.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from ._messages import Message
from ._messages import ToolCall
from ._messages import Usage
from ._models import ModelRequest
from ._models import ModelResponse
from ._models import StreamEvent
from ._schema_values import example_value
from ._tokens import estimate_tokens


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
