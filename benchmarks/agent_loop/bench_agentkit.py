"""agentkit, core only: an Agent with the default middlewares on ScriptedModel, ``hooks=Hooks()``.

``--tools def-thread`` runs the plain tools with ``blocking=True`` (on a worker thread, as the
peers run a ``def`` tool), the like-for-like row.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from common import ANSWER
from common import MAX_TURNS
from common import REC
from common import main
from common import tools

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent
from agentkit_core.testing import ScriptedModel

#: What the stub reports, as a provider does (so nothing estimates tokens for it).
USAGE = Usage(100, 10, 1)


def step(request: ModelRequest) -> ModelResponse:
    """One scripted step: the tool the recorder says is next, or the answer, with usage."""
    planned = REC.step()
    if planned is None:
        return ModelResponse(Message.assistant(ANSWER), USAGE, "stop", "scripted")
    name, args = planned
    call = ToolCall(f"call_{len(REC.model_in)}", name, json.dumps(args))
    return ModelResponse(Message.assistant("", (call,)), USAGE, "tool_calls", "scripted")


class StampedScript(ScriptedModel):
    """ScriptedModel, stamping when it returns (main's bench_events.py streams through it)."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = await super().request(request)
        REC.model_done()
        return response


class Stamped:
    """The stub model: each request answered by :func:`step`, stamped when it returns.

    It keeps no request, as the peers' stubs keep none (``ScriptedModel`` keeps every request
    it is sent, which over a long run holds the transcript's square).
    """

    name = "scripted"

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = step(request)
        REC.model_done()
        return response

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError("the benchmark does not stream")


def make(kind: str, **options: Any) -> Callable[[int], Awaitable[object]]:
    """The run, core only (``hooks=Hooks()``: no plugin's hook is folded).

    ``options`` go to the Agent over that (benchmarks/observability passes exporters=;
    ``hooks=None`` takes every installed plugin's hooks, as an Agent does by default).
    """
    model = Stamped()
    functions = tools(kind)
    if kind == "def-thread":  # like the peers: each call on a worker thread
        functions = tuple(tool(fn, blocking=True) for fn in functions)
    agent = Agent(
        "bench",
        model,
        "You are a benchmark.",
        functions,
        max_turns=MAX_TURNS,
        **{"hooks": Hooks(), **options},
    )

    async def run(turns: int) -> object:
        result = await agent.run("go")
        assert result.output == ANSWER, result.output
        return result

    return run


if __name__ == "__main__":
    main(make, "agentkit, core only", "agentkit-core")
