"""Blocking tool calls run on agentkit's worker threads, as asyncio.to_thread would run them."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import tool
from agentkit_core._threads import LIMIT
from agentkit_core._threads import run_in_thread
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


async def test_a_call_runs_off_the_loop_thread_in_the_callers_context() -> None:
    WHO.set("caller")

    def look(x: int, *, y: int) -> tuple[str, str, int]:
        return threading.current_thread().name, WHO.get(), x + y

    name, who, total = await run_in_thread(look, 1, y=2)
    assert name == "agentkit-tool" and who == "caller" and total == 3


async def test_what_the_function_raises_is_raised_in_the_caller() -> None:
    def fail() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        await run_in_thread(fail)


async def test_calls_run_side_by_side_up_to_the_limit() -> None:
    together = threading.Barrier(4, timeout=10)  # passes only when 4 threads wait at once
    assert LIMIT >= 4
    assert await asyncio.gather(*(run_in_thread(together.wait) for _ in range(4)))
    # more calls than threads wait for a free one
    assert await asyncio.gather(*(run_in_thread(lambda i=i: i) for i in range(3 * LIMIT))) == list(
        range(3 * LIMIT)
    )


async def test_a_cancelled_caller_leaves_the_thread_to_finish() -> None:
    release = threading.Event()
    pending = asyncio.ensure_future(run_in_thread(release.wait, 10))
    await asyncio.sleep(0.05)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    release.set()
    assert await run_in_thread(lambda: "still serving") == "still serving"


async def test_a_blocking_tool_runs_on_a_worker_thread_in_a_run() -> None:
    seen: list[str] = []

    def where() -> str:
        seen.append(threading.current_thread().name)
        return "ok"

    model = ScriptedModel([lambda r: _call("where"), "done"])
    agent = Agent("a", model, tools=[tool(where, blocking=True)], hooks=Hooks())
    assert (await agent.run("go")).output == "done"
    assert seen == ["agentkit-tool"]


def _call(name: str) -> Message:
    return Message.assistant("", [tool_call(name)])
