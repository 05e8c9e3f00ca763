"""A run on a durable executor, interrupted at any step and run again: its session holds it once.

``Replay`` is a durable executor in memory: it logs each step's result, and a run on a new one
over the same log gets the logged results back without running the steps, as DBOS does after a
crash (``plugins/executor-dbos`` tests it with real processes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import SessionConflict
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core import tool
from agentkit_core.plugin import Executor
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import NewItem
from agentkit_core.plugin import StepKind
from agentkit_core.plugin import open_session_store

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

T = TypeVar("T")


class Crash(BaseException):
    """The process died at a step (no handler of the run sees it)."""


class Replay(Executor):
    """Logs each step's result; replays a logged one. Dies at step ``die_at``: ``torn`` after
    the step's call ran, before its result was logged."""

    name = "replay"
    durable = True

    def __init__(self, log: list[tuple[str, Any]], die_at: int = -1, torn: bool = False) -> None:
        self.log, self.die_at, self.torn, self.at = log, die_at, torn, 0

    async def step(
        self,
        name: str,
        call: Callable[[], Awaitable[T]],
        *,
        kind: StepKind,
        idempotent: bool = True,
    ) -> T:
        at, self.at = self.at, self.at + 1
        if at < len(self.log):
            logged, result = self.log[at]
            assert logged == name, (at, logged, name)
            return result  # type: ignore[no-any-return]
        if at == self.die_at:
            if self.torn:
                await call()
            raise Crash(name)
        result = await call()
        self.log.append((name, result))
        return result


class TurnModel:
    """Calls ``add`` on the first two turns, then answers: the same on every execution."""

    name = "turns"

    async def request(self, request: ModelRequest) -> ModelResponse:
        turn = sum(1 for m in request.messages if m.role == "assistant") + 1
        if turn <= 2:
            call = ToolCall(f"c{turn}", "add", f'{{"a": {turn}, "b": 1}}')
            message = Message.assistant("", [call])
        else:
            message = Message.assistant("done")
        return ModelResponse(message, Usage(3, 2, 1), "stop", self.name)

    async def stream(self, request: ModelRequest) -> Any:
        raise NotImplementedError


@tool(idempotent=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def run(sessions: Sessions, recorder: Recorder, executor: Replay) -> None:
    agent = Agent(
        "a",
        TurnModel(),
        tools=[add],
        executor=executor,
        recorder=recorder,
        manager=PluginManager(entry_points=False),
    )
    await agent.run("add twice", ctx=agent.new_context("run-1"))


async def items(sessions: Sessions, session_id: str) -> list[tuple[str, str]]:
    return [(i.kind, i.body_json) for i in (await sessions.path(session_id))[1:]]


async def interrupted(die_at: int, torn: bool) -> tuple[list[Any], list[Any]]:
    async with Sessions(await open_session_store("memory://", manager=PM)) as sessions:
        await run(sessions, await Recorder.start(sessions, session_id="ref"), Replay([]))
        log: list[tuple[str, Any]] = []
        first = await Recorder.start(sessions, session_id="s")
        try:
            await run(sessions, first, Replay(log, die_at, torn))
        except Crash:
            # the next process opens the session at its leaf and runs the run again
            await run(sessions, await Recorder.resume(sessions, "s"), Replay(log))
        return await items(sessions, "ref"), await items(sessions, "s")


@settings(max_examples=40, deadline=None)
@given(die_at=st.integers(0, 12), torn=st.booleans())
def test_a_run_interrupted_at_any_step_records_its_session_once(die_at: int, torn: bool) -> None:
    reference, recorded = asyncio.run(interrupted(die_at, torn))
    assert [kind for kind, _ in reference].count("tool_result") == 2
    assert recorded == reference


async def test_a_batch_another_writer_beat_is_still_a_conflict(pm) -> None:
    async with Sessions(await open_session_store("memory://", manager=pm)) as sessions:
        recorder = await Recorder.start(sessions, session_id="s")
        assert recorder.leaf is not None
        await sessions.append("s", recorder.leaf, NewItem("notes/other", {"by": "someone"}))
        with pytest.raises(SessionConflict):
            await run(sessions, recorder, Replay([]))
