"""The workload as bare DBOS steps: the baseline both frameworks are measured against."""

from __future__ import annotations

import time
import uuid
from typing import Any

from dbos import DBOS
from dbos import SetWorkflowID
from workload import add
from workload import model_answer


@DBOS.workflow(name="bench.bare")
async def bare_run(task: str, marker: bool) -> str:
    """The same turns as the agent's, as bare DBOS steps.

    With ``marker``, each tool call is preceded by a marker step, as agentkit does for a tool
    that is not idempotent (what it takes to tell an interrupted call from one never started).
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    answers = 0
    while True:

        async def model(n: int = answers) -> Any:
            return model_answer(n)

        answer = await DBOS.run_step_async({"name": f"model:{answers + 1}"}, model)
        answers += 1
        if isinstance(answer, str):
            return answer
        name, args = answer
        messages.append({"role": "assistant", "tool": name, "args": args})

        async def call(arguments: dict[str, int] = args) -> int:
            return add(**arguments)

        if marker:

            async def mark(turn: int = answers) -> int:
                return turn

            await DBOS.run_step_async({"name": f"start tool:{name}:{answers}"}, mark)

        result = await DBOS.run_step_async({"name": f"tool:{name}:{answers}"}, call)
        messages.append({"role": "tool", "content": str(result)})


async def bare_round(marker: bool, runs: int) -> float:
    """Seconds ``runs`` bare runs take, one after another."""
    start = time.perf_counter()
    for _ in range(runs):
        with SetWorkflowID(str(uuid.uuid4())):
            handle = await DBOS.start_workflow_async(bare_run, "add", marker)
        assert (await handle.get_result()).startswith("added")
    return time.perf_counter() - start
