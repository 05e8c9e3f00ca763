"""An agent served as one MCP tool in the tests (imported as ``sample_agent:AGENT``).

Its model answers from the task it was handed, so a test can see the task crossed the wire.
"""

from collections.abc import AsyncIterator

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent


class Reviewer:
    name = "reviewer-model"

    async def request(self, request: ModelRequest) -> ModelResponse:
        task = next(m.text for m in reversed(request.messages) if m.role == "user")
        if "explode" in task:
            raise RuntimeError("the reviewer model broke")
        return ModelResponse(Message.assistant(f"reviewed: {task}"), Usage(1, 1, 1), "stop")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield StreamEvent("done", response=await self.request(request))


AGENT = Agent("reviewer", Reviewer(), "You review things.")
