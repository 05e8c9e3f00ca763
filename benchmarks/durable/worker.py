"""A throughput worker: serves the workload agent on the queue ``bench``.

``python worker.py DATABASE WORKER_ID CONCURRENCY MODEL_LATENCY`` until killed; the model waits
MODEL_LATENCY seconds per call (a provider's response time), the tool is idempotent.
"""

from __future__ import annotations

import asyncio
import sys

from bench_steps import WorkloadModel
from workload import add

from agentkit_core import Agent
from agentkit_core import PluginManager
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse


class SlowModel(WorkloadModel):
    """The workload's model, answering after a fixed latency."""

    latency = 0.0

    async def request(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(self.latency)
        return await super().request(request)


def main() -> None:
    from agentkit_executor_dbos import DBOSExecutor

    database, worker_id, concurrency, latency = sys.argv[1:5]
    executor = DBOSExecutor(
        database=database, queue="bench", worker_id=worker_id, concurrency=int(concurrency)
    )
    model = SlowModel()
    model.latency = float(latency)
    agent = Agent(
        "bench",
        model,
        tools=[tool(add, idempotent=True)],
        executor=executor,
        max_turns=100,
        manager=PluginManager(entry_points=False),
    )
    asyncio.run(executor.serve(agent))


if __name__ == "__main__":
    main()
