"""agentkit: an Agent with the default middlewares (tracing, metering, retry) on ScriptedModel."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from common import ANSWER
from common import REC
from common import main
from common import tools

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ModelRequest
from agentkit_core import ModelResponse
from agentkit_core import ToolCall
from agentkit_core.testing import ScriptedModel


def step(request: ModelRequest) -> Message:
    """One scripted step: the tool the recorder says is next, or the answer."""
    planned = REC.step()
    if planned is None:
        return Message.assistant(ANSWER)
    name, args = planned
    return Message.assistant("", (ToolCall(f"call_{len(REC.model_in)}", name, json.dumps(args)),))


class StampedScript(ScriptedModel):
    """ScriptedModel, stamping when it returns, replaying the same script on every run."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = await super().request(request)
        REC.model_done()
        return response


def make(kind: str, **options: Any) -> Callable[[int], Awaitable[object]]:
    """The run; ``options`` go to the Agent (benchmarks/observability passes exporters=)."""
    model = StampedScript([step] * 1000, name="scripted")
    agent = Agent(
        "bench",
        model,
        "You are a benchmark.",
        tools(kind),
        hooks=Hooks(),
        max_turns=1000,
        **options,
    )

    async def run(turns: int) -> object:
        model.requests.clear()
        result = await agent.run("go")
        assert result.output == ANSWER, result.output
        return result

    return run


if __name__ == "__main__":
    main(make, "agentkit", "agentkit-core")
