"""A scripted model for the streaming CLI's tests (``agentkit run``, ``agentkit chat``).

It answers the last message by what it says, so a script survives a new process or a resumed
session: ``look NAME`` calls ``lookup``, ``pay N`` calls ``transfer``, ``slow`` streams five
words 0.4 s apart, ``hang`` streams one word then waits a minute, ``flaky`` fails once with a
retryable error (then echoes); anything else is echoed
with the number of user messages the model saw (``echo 2: hi``). After a tool result it says
``done after TOOL`` (``(error)`` when the result is one: a refused call). :data:`CHAT_PLUGIN`
offers it to a subprocess as ``--model chat:NAME``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent

SLOW_WORDS = ["one ", "two ", "three ", "four ", "five"]

#: A plugin module registering the model (its site and the repository on PYTHONPATH).
CHAT_PLUGIN = """
from agentkit_core import hookimpl
from tests.chat_models import ChatModel


@hookimpl
def agentkit_register_models(register):
    register("chat", ChatModel)
"""


class ChatModel:
    """See the module's docstring."""

    def __init__(self, name: str = "") -> None:
        self.name = f"chat:{name}"
        self.failed = False  # ``flaky`` failed once

    def _script(self, request: ModelRequest) -> tuple[list[str], list[ToolCall], float]:
        """The answer's text chunks, its calls, and the pause before each chunk."""
        last = request.messages[-1]
        if last.role == "tool":
            return [f"done after {last.name}" + (" (error)" if last.is_error else "")], [], 0
        text = last.text.strip()
        word, _, rest = text.partition(" ")
        if word == "look":
            return [], [ToolCall("call_look", "lookup", json.dumps({"name": rest}))], 0
        if word == "pay":
            arguments = json.dumps({"amount": int(rest)})
            return [], [ToolCall(f"call_pay_{rest}", "transfer", arguments)], 0
        if word == "slow":
            return SLOW_WORDS, [], 0.4
        if word == "hang":
            return ["thinking", ""], [], 60
        if word == "flaky" and not self.failed:
            self.failed = True
            raise ProviderError("scripted: overloaded, try again", retryable=True)
        users = sum(1 for m in request.messages if m.role == "user")
        return [f"echo {users}: {text}"], [], 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        chunks, calls, pause = self._script(request)
        for i, chunk in enumerate(chunks):
            if i and pause:
                await asyncio.sleep(pause)
            if chunk:
                yield StreamEvent("text", text=chunk)
        for call in calls:
            yield StreamEvent("tool_call", tool_call=call)
        message = Message.assistant("".join(chunks), calls)
        usage = Usage(10 * len(request.messages), len(chunks) + len(calls), 1)
        response = ModelResponse(message, usage, "tool_calls" if calls else "stop", self.name)
        yield StreamEvent("done", response=response)

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = None
        async for event in self.stream(request):
            response = event.response
        assert response is not None
        return response
