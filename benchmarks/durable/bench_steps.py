"""Per-step cost of a durable run: agentkit on DBOS vs bare DBOS steps doing the same work.

Both run in one process on one DBOS instance and one SQLite system database, rounds alternated:

- bare: a DBOS workflow that, turn after turn, runs the model function as one step and the tool
  as another (``DBOS.run_step_async``), keeping the messages in a list;
- agentkit: ``DBOSExecutor.run(agent, task)``: the agent loop with a model and a tool, each
  model call and tool call a DBOS step.

Measured twice: with an idempotent tool (21 DBOS steps a run each way), and with a tool that is
not idempotent, where agentkit puts a marker step before each call and the bare workflow does
the same (31 each). Prints one JSON line per case: microseconds per DBOS step and the ratio.
``python bench_steps.py [DIR]`` (DIR holds the database; default a temporary directory).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bare import bare_round
from workload import ROUNDS
from workload import RUNS
from workload import STEPS
from workload import TURNS
from workload import add
from workload import model_answer

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core import ModelRequest
from agentkit_core import ModelResponse
from agentkit_core import PluginManager
from agentkit_core import StreamEvent
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core import tool


class WorkloadModel:
    """The workload's model for agentkit."""

    name = "workload"

    async def request(self, request: ModelRequest) -> ModelResponse:
        answer = model_answer(sum(1 for m in request.messages if m.role == "assistant"))
        if isinstance(answer, str):
            message = Message.assistant(answer)
        else:
            turn = sum(1 for m in request.messages if m.role == "assistant") + 1
            message = Message.assistant(
                "", [ToolCall(f"c{turn}", answer[0], json.dumps(answer[1]))]
            )
        return ModelResponse(message, Usage(1, 1, 1), "stop", self.name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield StreamEvent("done", response=await self.request(request))


def _agent(executor: Any, idempotent: bool) -> Agent:
    return Agent(
        f"bench-{idempotent}",
        WorkloadModel(),
        tools=[tool(add, idempotent=idempotent)],
        executor=executor,
        max_turns=100,
        manager=PluginManager(entry_points=False),
    )


async def main(folder: Path) -> list[dict[str, Any]]:
    from agentkit_executor_dbos import DBOSExecutor

    executor = DBOSExecutor(database=f"sqlite:///{folder / 'bench.sqlite'}")
    agents = {True: _agent(executor, True), False: _agent(executor, False)}

    async def agentkit_round(idempotent: bool) -> float:
        start = time.perf_counter()
        for _ in range(RUNS):
            run_id = str(uuid.uuid4())
            result = await executor.run(agents[idempotent], "add", run_id=run_id)
            assert result.output.startswith("added")
        return time.perf_counter() - start

    out = []
    try:
        for idempotent in (True, False):  # warm both paths (the first launches DBOS)
            await agentkit_round(idempotent)
            await bare_round(not idempotent, RUNS)
        for idempotent in (True, False):
            bare: list[float] = []
            ours: list[float] = []
            for _ in range(ROUNDS):
                bare.append(await bare_round(not idempotent, RUNS))
                ours.append(await agentkit_round(idempotent))
            steps = STEPS if idempotent else STEPS + TURNS
            per_step = 1e6 / (RUNS * steps)
            bare_us = statistics.median(bare) * per_step
            ours_us = statistics.median(ours) * per_step
            out.append(
                {
                    "bench": "per-step",
                    "tool": "idempotent" if idempotent else "not idempotent (marker step)",
                    "dbos_steps_per_run": steps,
                    "runs_per_round": RUNS,
                    "rounds": ROUNDS,
                    "bare_dbos_us_per_step": round(bare_us, 1),
                    "agentkit_dbos_us_per_step": round(ours_us, 1),
                    "ratio": round(ours_us / bare_us, 3),
                }
            )
    finally:
        executor.close()
    return out


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for line in asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else tmp))):
            print(json.dumps(line))
