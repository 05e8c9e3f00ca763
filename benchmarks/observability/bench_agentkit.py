"""agentkit's agent-loop turn (benchmarks/agent_loop) with span exporters attached or not.

``BENCH_EXPORTER``: ``none`` (no exporter), ``otel`` (the tracing-otel plugin on a batch
processor and a no-op exporter), ``otel-content`` (the same, recording content), ``file`` (a
trace file on /dev/null).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))

from bench_agentkit import StampedScript
from bench_agentkit import step
from common import ANSWER
from common import main
from common import tools

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import TraceFile

KIND = os.environ.get("BENCH_EXPORTER", "none")


def exporters() -> list[Any]:
    if KIND == "none":
        return []
    if KIND == "file":
        return [TraceFile(os.devnull)]
    from agentkit_tracing_otel import OTelExporter
    from noop import noop_provider

    return [OTelExporter(noop_provider(), capture_content=KIND == "otel-content")]


def make(kind: str) -> Callable[[int], Awaitable[object]]:
    model = StampedScript([step] * 1000, name="scripted")
    agent = Agent(
        "bench",
        model,
        "You are a benchmark.",
        tools(kind),
        hooks=Hooks(),
        max_turns=1000,
        exporters=exporters(),
    )

    async def run(turns: int) -> object:
        model.requests.clear()
        result = await agent.run("go")
        assert result.output == ANSWER, result.output
        return result

    return run


if __name__ == "__main__":
    main(make, f"agentkit exporter={KIND}", "agentkit-core")
