"""pydantic-ai: Agent.run on a FunctionModel whose function is async and reports usage.

At its best: a plain ``def`` function would run on a worker thread (the hop counted against
pydantic-ai), and a response without usage makes FunctionModel estimate tokens over the whole
transcript after each call; a real provider causes neither.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from common import ANSWER
from common import REC
from common import main
from common import tools
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.messages import ModelResponse
from pydantic_ai.messages import TextPart
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage
from pydantic_ai.usage import UsageLimits


async def stub(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    planned = REC.step()
    usage = RequestUsage(input_tokens=100, output_tokens=10)
    if planned is None:
        response = ModelResponse(parts=[TextPart(ANSWER)], usage=usage)
    else:
        name, args = planned
        response = ModelResponse(
            parts=[ToolCallPart(name, args, tool_call_id=f"call_{len(REC.model_in)}")],
            usage=usage,
        )
    REC.model_done()
    return response


def make(kind: str, **options: Any) -> Callable[[int], Awaitable[object]]:
    """The run; ``options`` go to the Agent (benchmarks/observability passes capabilities=)."""
    agent = Agent(
        FunctionModel(stub),
        instructions="You are a benchmark.",
        tools=list(tools(kind)),
        **options,
    )

    async def run(turns: int) -> object:
        result = await agent.run("go", usage_limits=UsageLimits(request_limit=None))
        assert result.output == ANSWER, result.output
        return result

    return run


if __name__ == "__main__":
    main(make, "pydantic-ai", "pydantic-ai-slim")
