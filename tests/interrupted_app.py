"""A run killed inside a tool call, for tests/test_interrupted.py (run as a subprocess).

``python interrupted_app.py DIRECTORY checkpoint|session`` starts a run whose ``charge`` call
notes its effect, marks that it started, and hangs until the process is killed.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import Tool
from agentkit_core import ToolCall
from agentkit_core import open_checkpointer
from agentkit_core import open_sessions
from agentkit_core import tool
from agentkit_core.plugin import InProcessExecutor
from agentkit_core.testing import ScriptedModel

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

BATCH = Message.assistant(
    "",
    [ToolCall("c1", "charge", '{"amount": 5}'), ToolCall("c2", "lookup", '{"name": "ann"}')],
)


def tools(directory: Path, hang: bool) -> list[Tool]:
    @tool
    async def charge(amount: int) -> str:
        """Charge the card (not idempotent: twice is two charges)."""
        with (directory / "effects").open("a", encoding="utf-8") as out:
            out.write(f"charge {amount}\n")
        if hang:
            (directory / "started").touch()
            await asyncio.sleep(3600)
        return f"charged {amount}"

    @tool(idempotent=True)
    def lookup(name: str) -> str:
        """Read an account (idempotent)."""
        with (directory / "effects").open("a", encoding="utf-8") as out:
            out.write(f"lookup {name}\n")
        return f"account of {name}"

    return [charge, lookup]


def agent(directory: Path, steps: list[Any], *, hang: bool, mode: str, cp: Any = None) -> Agent:
    return Agent(
        "pay",
        model=ScriptedModel(steps),
        tools=tools(directory, hang),
        checkpointer=cp,
        executor=InProcessExecutor(interrupted=mode),
    )


async def main(directory: Path, where: str) -> None:
    run = agent(directory, [BATCH], hang=True, mode="report")
    if where == "checkpoint":
        async with await open_checkpointer(f"sqlite:///{directory / 'runs.db'}", manager=PM) as cp:
            run = agent(directory, [BATCH], hang=True, mode="report", cp=cp)
            ctx = run.new_context("r1")
            await run.run("pay ann", ctx=ctx)
    else:
        async with await open_sessions(
            f"sqlite:///{directory / 'sessions.db'}", manager=PM
        ) as sessions:
            recorder = await Recorder.start(sessions, session_id="s1")
            ctx = run.new_context("r1")
            ctx.recorder = recorder
            await run.run("pay ann", ctx=ctx)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
