"""A small product run under a policy file, for tests that run it in several processes.

``python tests/policy_app.py STEP DIR [ARGS...]`` runs one step in its own process and prints
one JSON line: ``suspend`` (a run whose batch holds a call for a person), ``approve-session
SESSION CALL BY`` (release it from the session in this new process), ``approve-checkpoint RUN
CALL BY`` (release it from the checkpoint instead).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from agentkit_core import Agent
from agentkit_core import Approval
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import open_checkpointer
from agentkit_core import tool
from agentkit_core.testing import ScriptedModel

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

POLICY = """\
default = "ask"

[[rules]]
id = "read-only-git"
verdict = "allow"
tool = "bash"
match = { command = { prefix = ["git status", "git log"] } }

[[rules]]
id = "no-push"
verdict = "deny"
tool = "bash"
match = { command = { prefix = ["git push"] } }
reason = "people push"

[[rules]]
id = "transfers"
verdict = "ask"
tool = "transfer"
reason = "money moves only with a person's yes"

[[rules]]
id = "no-wipe"
verdict = "deny"
tool = "wipe"
"""

ran: list[str] = []


@tool
def bash(command: str) -> str:
    """Run a shell command (here: pretend to)."""
    ran.append(command)
    return f"ran {command}"


@tool
def transfer(amount: int) -> str:
    """Move money."""
    ran.append(f"transfer {amount}")
    return f"moved {amount}"


@tool
def wipe(path: str) -> str:
    """Delete everything under a path."""
    ran.append(f"wipe {path}")
    return f"wiped {path}"


def batch() -> Message:
    """One answer asking for four calls at once."""
    return Message.assistant(
        "",
        [
            ToolCall("c1", "bash", '{"command": "git status"}'),
            ToolCall("c2", "transfer", '{"amount": 5}'),
            ToolCall("c3", "bash", '{"command": "git push --force"}'),
            ToolCall("c4", "bash", '{"command": "make deploy"}'),
        ],
    )


def write_policy(directory: Path) -> Path:
    path = directory / "policy.toml"
    path.write_text(POLICY, encoding="utf-8")
    return path


async def open_kit(
    directory: Path, steps: list[Any], *, session: bool = True, **options: Any
) -> Kit:
    if session:
        options["session"] = f"sqlite:///{directory / 'sessions.db'}"
    return await Kit.open(
        model=ScriptedModel(steps),
        tools=[bash, transfer, wipe],
        policy=str(write_policy(directory)),
        **options,
    )


async def main(step: str, directory: Path, args: list[str]) -> dict[str, Any]:
    checkpointer = await open_checkpointer(f"sqlite:///{directory / 'runs.db'}", manager=PM)
    try:
        if step == "suspend":
            async with await open_kit(directory, [batch()]) as kit:
                agent = Agent.from_config(kit.config(), checkpointer=checkpointer)
                result = await agent.run("tidy up and pay ann")
                return {
                    "session": kit.session_id,
                    "run": result.run_id,
                    "status": result.status,
                    "pending": [c.id for c in result.pending],
                    "ran": ran,
                }
        if step == "approve-session":
            session, call, by = args
            async with await open_kit(directory, ["done"], resume=session) as kit:
                state = kit.recorder.state
                run, held = state.run or "", state.held
                assert kit.policy is not None
                answers = kit.policy.release(
                    run, [Approval(call, by=by)], calls=held, scope=session
                )
                agent = Agent.from_config(kit.config())
                result = await agent.resume(run, answers)
                return {"output": result.output, "ran": ran, "held": [c.id for c in held]}
        if step == "approve-checkpoint":
            run, call, by = args
            saved = await checkpointer.resume(run)
            assert saved is not None
            async with await open_kit(directory, ["done"], session=False) as kit:
                assert kit.policy is not None
                pending = saved.state["pending"]
                answers = kit.policy.release(run, [Approval(call, by=by)], calls=pending)
                agent = Agent.from_config(kit.config(), checkpointer=checkpointer)
                result = await agent.resume(run, answers)
                return {"output": result.output, "ran": ran}
        raise SystemExit(f"unknown step {step!r}")
    finally:
        await checkpointer.aclose()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3:]))))
