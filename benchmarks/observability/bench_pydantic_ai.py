"""pydantic-ai's agent-loop turn (benchmarks/agent_loop), instrumented or not.

``BENCH_EXPORTER``: ``none`` (no instrumentation), ``otel`` (``instrument=`` on a batch
processor and a no-op exporter, content excluded), ``otel-content`` (content included).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))

from bench_pydantic_ai import stub
from common import ANSWER
from common import main
from common import tools
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import UsageLimits

KIND = os.environ.get("BENCH_EXPORTER", "none")


def make(kind: str) -> Callable[[int], Awaitable[object]]:
    instrument: object = False
    if KIND != "none":
        from noop import noop_provider
        from pydantic_ai.models.instrumented import InstrumentationSettings

        instrument = InstrumentationSettings(
            tracer_provider=noop_provider(), include_content=KIND == "otel-content"
        )
    agent = Agent(
        FunctionModel(stub),
        instructions="You are a benchmark.",
        tools=list(tools(kind)),
        instrument=instrument,  # type: ignore[arg-type]
    )

    async def run(turns: int) -> object:
        result = await agent.run("go", usage_limits=UsageLimits(request_limit=None))
        assert result.output == ANSWER, result.output
        return result

    return run


if __name__ == "__main__":
    main(make, f"pydantic-ai exporter={KIND}", "pydantic-ai-slim")
