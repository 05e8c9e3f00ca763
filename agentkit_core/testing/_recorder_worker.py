"""One step of a recorded conversation, in a process of its own (for RecorderProcessConformance).

``python -m agentkit_core.testing._recorder_worker MODE URL [SESSION] [ARG]`` builds a kit on
the store at URL (a bank agent: ``lookup`` runs freely, ``transfer`` waits for a person's
approval), does one step and prints one JSON line:

* ``suspend``: a new session; the model asks for ``lookup`` and ``transfer`` and the run
  suspends. Prints the session, the run and the pending call ids.
* ``approve SESSION CALL``: resumes the session, approves CALL, lets the run finish, then asks
  a follow-up question on the conversation. Prints what it found pending, the result, and the
  messages the model was sent on the follow-up.
* ``race SESSION NAME``: resumes the session, prints ``ready``, waits for a line on stdin, then
  runs a task. Prints ``{"ok": ...}`` or ``{"conflict": <the error's session>, ...}``.
* ``reason MODEL``: a new session whose model, named MODEL, answers with reasoning attached.
* ``switch SESSION MODEL``: resumes with a model named MODEL and reports the reasoning the
  model was sent, if any.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from .. import Agent
from .. import Kit
from .. import Message
from .. import SessionConflict
from .. import ToolCall
from .. import ToolDecision
from .. import tool
from .._session_state import REASONING
from ..plugin import ModelRequest
from ._models import ScriptedModel
from ._models import Step


@tool
def lookup(name: str) -> str:
    """Look up an account."""
    return f"account of {name}"


@tool
def transfer(amount: int) -> str:
    """Move money."""
    return f"moved {amount}"


def ask_for_transfers(ctx: object, call: ToolCall) -> ToolDecision | None:
    if call.name == "transfer":
        return ToolDecision.ask("a person approves transfers")
    return None


def seen(request: ModelRequest) -> Message:
    """An answer listing what the model was sent: each message as ``role: text``."""
    return Message.assistant(json.dumps([f"{m.role}: {m.text}" for m in request.messages]))


def reasoning_seen(request: ModelRequest) -> Message:
    found = [m.metadata[REASONING] for m in request.messages if REASONING in m.metadata]
    return Message.assistant(json.dumps(found))


async def open_kit(url: str, steps: list[Step], model: str = "bank", **session: Any) -> Kit:
    return await Kit.open(
        name="bank",
        model=ScriptedModel(steps, name=model),
        instructions="You move money for people.",
        tools=[lookup, transfer],
        before_tool_call=ask_for_transfers,
        session=url,
        **session,
    )


async def main(mode: str, url: str, args: list[str]) -> dict[str, Any]:
    if mode == "suspend":
        calls = [
            ToolCall("c1", "lookup", '{"name": "ann"}'),
            ToolCall("c2", "transfer", '{"amount": 5}'),
        ]
        async with await open_kit(url, [Message.assistant("", calls)]) as kit:
            result = await Agent.from_config(kit.config()).run("pay ann 5")
            return {
                "session": kit.session_id,
                "run": result.run_id,
                "status": result.status,
                "pending": [c.id for c in result.pending],
            }
    if mode == "approve":
        sid, call = args
        async with await open_kit(url, ["paid", seen], resume=sid) as kit:
            state = kit.recorder.state
            found = {
                "run": state.run,
                "pending": [c.id for c in state.pending],
                "held": [c.id for c in state.held],
            }
            agent = Agent.from_config(kit.config())
            assert state.run is not None
            result = await agent.resume(state.run, approvals={call: True})
            follow = await agent.run("did it work?", wc=kit.working_context())
            return {
                **found,
                "status": result.status,
                "output": result.output,
                "seen": json.loads(follow.output),
            }
    if mode == "race":
        sid, name = args
        async with await open_kit(url, [f"hello {name}"], resume=sid) as kit:
            print(json.dumps({"ready": name}), flush=True)
            sys.stdin.readline()
            try:
                result = await Agent.from_config(kit.config()).run(
                    f"from {name}", wc=kit.working_context()
                )
            except SessionConflict as exc:
                return {"conflict": exc.session_id, "message": str(exc)}
            return {"ok": result.output}
    if mode == "reason":
        (model,) = args
        thought = Message(
            "assistant", "four", metadata={REASONING: {"model": model, "text": "2+2"}}
        )
        async with await open_kit(url, [thought], model=model) as kit:
            await Agent.from_config(kit.config()).run("2+2?")
            return {"session": kit.session_id}
    if mode == "switch":
        sid, model = args
        async with await open_kit(url, [reasoning_seen], model=model, resume=sid) as kit:
            result = await Agent.from_config(kit.config()).run("and 3+3?", wc=kit.working_context())
            return {"reasoning": json.loads(result.output)}
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))), flush=True)
