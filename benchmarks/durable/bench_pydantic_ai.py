"""The workload on a durable pydantic-ai agent, beside bare DBOS steps in the same process.

Runs in the venv ``setup.sh`` makes (pydantic-ai-slim[dbos], the same dbos as agentkit's). The
agent has pydantic-ai's ``DBOSDurability`` capability (which replaced the ``DBOSAgent`` wrapper)
and runs inside a ``@DBOS.workflow``, as its documentation says. The model is a
``FunctionModel`` answering as the workload says; the tool is a DBOS step (a pydantic-ai
function tool is not one unless decorated), so a run is 21 steps, as agentkit's with an
idempotent tool (checked in the database). Prints one JSON line: microseconds per step,
pydantic-ai and bare (medians over the rounds), and the ratio, each round's over the bare round
before it (median and range).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bare import bare_round
from dbos import DBOS
from dbos import SetWorkflowID
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage
from pydantic_ai.messages import ModelResponse
from pydantic_ai.messages import TextPart
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.models.function import FunctionModel
from workload import ROUNDS
from workload import RUNS
from workload import STEPS
from workload import add
from workload import model_answer


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    answers = sum(1 for m in messages if isinstance(m, ModelResponse))
    said = model_answer(answers)
    if isinstance(said, str):
        return ModelResponse(parts=[TextPart(said)])
    return ModelResponse(parts=[ToolCallPart(said[0], said[1], tool_call_id=f"c{answers + 1}")])


agent = Agent(FunctionModel(answer), name="bench", capabilities=[DBOSDurability()])


@DBOS.step(name="bench.add")
async def add_step(a: int, b: int) -> int:
    return add(a, b)


@agent.tool_plain(name="add")
async def add_tool(a: int, b: int) -> int:
    """Add two numbers."""
    return await add_step(a, b)


@DBOS.workflow(name="bench.pydantic_ai")
async def durable_run(prompt: str) -> str:
    return (await agent.run(prompt)).output


async def main(folder: Path) -> dict[str, Any]:
    DBOS(
        config={
            "name": "bench-pydantic-ai",
            "system_database_url": f"sqlite:///{folder / 'bench.sqlite'}",
            "log_level": "WARNING",
        }
    )
    DBOS.launch()

    async def pydantic_ai_round() -> float:
        start = time.perf_counter()
        for _ in range(RUNS):
            with SetWorkflowID(str(uuid.uuid4())):
                output = await durable_run("add")
            assert output.startswith("added")
        return time.perf_counter() - start

    async def steps_of_one_run() -> int:
        run_id = str(uuid.uuid4())
        with SetWorkflowID(run_id):
            await durable_run("add")
        with contextlib.closing(sqlite3.connect(folder / "bench.sqlite")) as db:
            query = "SELECT count(*) FROM operation_outputs WHERE workflow_uuid = ?"
            return int(db.execute(query, (run_id,)).fetchone()[0])

    try:
        steps = await steps_of_one_run()
        assert steps == STEPS, f"a pydantic-ai run made {steps} DBOS steps, not {STEPS}"
        await pydantic_ai_round()
        await bare_round(False, RUNS)
        theirs: list[float] = []
        bare: list[float] = []
        for _ in range(ROUNDS):
            bare.append(await bare_round(False, RUNS))
            theirs.append(await pydantic_ai_round())
    finally:
        DBOS.destroy()
    per_step = 1e6 / (RUNS * STEPS)
    # each round's pydantic-ai over the bare round before it
    ratios = [t / b for t, b in zip(theirs, bare, strict=True)]
    return {
        "bench": "per-step, pydantic-ai DBOSDurability",
        "dbos_steps_per_run": STEPS,
        "bare_dbos_us_per_step": round(statistics.median(bare) * per_step, 1),
        "pydantic_ai_dbos_us_per_step": round(statistics.median(theirs) * per_step, 1),
        "ratio": f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})",
        "load": f"{os.getloadavg()[0]:.1f}",
    }


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else tmp)))
        print(json.dumps(result, ensure_ascii=False))
