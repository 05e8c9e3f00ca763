"""Per-step cost of a durable run: agentkit on DBOS vs bare DBOS steps doing the same work.

Both run in one process on one DBOS instance and one SQLite system database, rounds alternated:

- bare: a DBOS workflow that, turn after turn, runs the model function as one step and the tool
  as another (``DBOS.run_step_async``), keeping the messages in a list;
- agentkit: ``DBOSExecutor.run(agent, task)``: the agent loop with a model and a tool, each
  model call and tool call a DBOS step.

agentkit runs twice over: with every installed plugin's hooks (an Agent's default, as the
README installs agentkit) and with core only (``PluginManager(entry_points=False)``). Measured
with an idempotent tool (21 DBOS steps a run each way), and with a tool that is not idempotent,
where agentkit puts a marker step before each call and the bare workflow does the same (31
each). Rounds take turns (bare, every plugin, core only); each ratio to bare is taken within its
round. Prints one JSON line per case: microseconds per DBOS step and the ratios, each the median
over the rounds with the range, and the load average.
``python bench_steps.py [DIR]`` (DIR holds the database; default a temporary directory).
"""

from __future__ import annotations

import asyncio
import json
import os
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
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import StreamEvent

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread


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


#: How agentkit runs: as installed (every plugin's hooks) and core only.
SETUPS = ("every plugin installed", "core only")


def _agent(executor: Any, idempotent: bool, setup: str) -> Agent:
    core_only = {"manager": PluginManager(entry_points=False)} if setup == "core only" else {}
    return Agent(
        f"bench-{idempotent}-{setup.replace(' ', '-')}",
        WorkloadModel(),
        tools=[tool(add, idempotent=idempotent)],
        executor=executor,
        max_turns=100,
        **core_only,
    )


async def main(folder: Path) -> list[dict[str, Any]]:
    from agentkit_executor_dbos import DBOSExecutor

    executor = DBOSExecutor(database=f"sqlite:///{folder / 'bench.sqlite'}")
    agents = {(i, s): _agent(executor, i, s) for i in (True, False) for s in SETUPS}

    async def agentkit_round(idempotent: bool, setup: str) -> float:
        start = time.perf_counter()
        for _ in range(RUNS):
            run_id = str(uuid.uuid4())
            result = await executor.run(agents[idempotent, setup], "add", run_id=run_id)
            assert result.output.startswith("added")
        return time.perf_counter() - start

    out = []
    try:
        for idempotent in (True, False):  # warm every path (the first launches DBOS)
            for setup in SETUPS:
                await agentkit_round(idempotent, setup)
            await bare_round(not idempotent, RUNS)
        for idempotent in (True, False):
            loads = [os.getloadavg()[0]]
            bare: list[float] = []
            ours: dict[str, list[float]] = {s: [] for s in SETUPS}
            for _ in range(ROUNDS):
                bare.append(await bare_round(not idempotent, RUNS))
                for setup in SETUPS:
                    ours[setup].append(await agentkit_round(idempotent, setup))
                loads.append(os.getloadavg()[0])
            steps = STEPS if idempotent else STEPS + TURNS
            per_step = 1e6 / (RUNS * steps)
            line: dict[str, Any] = {
                "bench": "per-step",
                "tool": "idempotent" if idempotent else "not idempotent (marker step)",
                "dbos_steps_per_run": steps,
                "runs_per_round": RUNS,
                "rounds": ROUNDS,
                "bare_dbos_us_per_step": spread([b * per_step for b in bare], ",.0f"),
            }
            for setup in SETUPS:
                line[f"agentkit_us_per_step ({setup})"] = spread(
                    [o * per_step for o in ours[setup]], ",.0f"
                )
                line[f"ratio ({setup})"] = spread(
                    [o / b for o, b in zip(ours[setup], bare, strict=True)], ".3f"
                )
            line["load"] = f"{min(loads):.1f}–{max(loads):.1f}"
            out.append(line)
    finally:
        executor.close()
    return out


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for line in asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else tmp))):
            print(json.dumps(line, ensure_ascii=False))
