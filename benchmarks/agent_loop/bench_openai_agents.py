"""The OpenAI Agents SDK: Runner.run with a custom Model, tracing disabled."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from agents import Agent
from agents import Model
from agents import ModelResponse
from agents import RunConfig
from agents import Runner
from agents import Usage
from agents import function_tool
from agents import set_tracing_disabled
from common import ANSWER
from common import MAX_TURNS
from common import REC
from common import main
from common import tools
from openai.types.responses import ResponseFunctionToolCall
from openai.types.responses import ResponseOutputMessage
from openai.types.responses import ResponseOutputText


class StubModel(Model):
    """One function call per turn, then a message with the answer."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        planned = REC.step()
        if planned is None:
            text = ResponseOutputText(type="output_text", text=ANSWER, annotations=[])
            item: Any = ResponseOutputMessage(
                id="msg_1", type="message", role="assistant", status="completed", content=[text]
            )
        else:
            name, args_ = planned
            n = len(REC.model_in)
            item = ResponseFunctionToolCall(
                type="function_call", call_id=f"call_{n}", name=name, arguments=json.dumps(args_)
            )
        response = ModelResponse(output=[item], usage=Usage(), response_id=None)
        REC.model_done()
        return response

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def make(kind: str) -> Callable[[int], Awaitable[object]]:
    set_tracing_disabled(True)
    agent = Agent(
        name="bench",
        instructions="You are a benchmark.",
        model=StubModel(),
        tools=[function_tool(fn) for fn in tools(kind)],
    )
    config = RunConfig(tracing_disabled=True)

    async def run(turns: int) -> object:
        result = await Runner.run(agent, "go", max_turns=MAX_TURNS, run_config=config)
        assert result.final_output == ANSWER, result.final_output
        return result

    return run


if __name__ == "__main__":
    main(make, "OpenAI Agents SDK", "openai-agents")
