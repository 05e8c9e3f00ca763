"""The one DBOS workflow: an agent run, by the agent's name and the task.

Imported (and so registered with DBOS) before DBOS launches in a process that runs or serves
runs; a process that only submits or reads results never imports it.
"""

from __future__ import annotations

import uuid

from dbos import DBOS

from agentkit_core import AgentResult
from agentkit_core import ConfigError

from ._executor import _EXECUTION
from ._executor import RUNTIME
from ._executor import WORKFLOW


@DBOS.workflow(name=WORKFLOW)
async def agentkit_run(agent: str, task: str) -> AgentResult:
    """Run the agent named ``agent`` on ``task``; the run's id is the workflow's."""
    served = RUNTIME.agents.get(agent)
    if served is None:
        raise ConfigError(
            f"this worker serves no agent named {agent!r} (it serves: "
            f"{', '.join(sorted(RUNTIME.agents)) or 'none'}); submit with agent= one of them, "
            "or start a worker for it",
            value=agent,
            source="DBOSExecutor.submit(agent=)",
        )
    run_id = DBOS.workflow_id
    assert run_id is not None
    token = _EXECUTION.set(uuid.uuid4().hex)  # this execution, told from earlier ones
    try:
        return await served.run(task, ctx=served.new_context(run_id))
    finally:
        _EXECUTION.reset(token)
