"""Nothing a run waits on waits for ever by default: a tool call ends after the agent's
``tool_timeout`` (300 s) and a question to a person after the run's ``elicit_timeout`` (900 s),
each overridable and ``None`` to disable; what the docs say the defaults are is what they are."""

from __future__ import annotations

import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import ElicitationError
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import tool
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import tool_call

DOCS = Path(__file__).resolve().parents[1] / "docs"


def calls(name: str) -> Message:
    return Message.assistant("", [tool_call(name, "{}", id="c1")])


@tool
async def hang() -> str:
    """Wait for ever."""
    await asyncio.Event().wait()
    return "never"


def test_the_default_tool_timeout_is_the_one_the_docs_give() -> None:
    default = inspect.signature(Agent).parameters["tool_timeout"].default
    assert default == 300
    assert Agent("a", ScriptedModel([]), hooks=Hooks()).tool_timeout == 300
    assert re.search(r"`tool_timeout=` \(300 s\s+by default", (DOCS / "agents.md").read_text())


def test_the_default_elicit_timeout_is_the_one_the_docs_give() -> None:
    assert RunContext().elicit_timeout == 900
    assert re.search(r"`ctx\.elicit_timeout`, 900 s\s+by default", (DOCS / "agents.md").read_text())


async def test_a_hanging_tool_ends_with_the_timeout_error_and_the_run_goes_on() -> None:
    agent = Agent(
        "a", ScriptedModel([calls("hang"), "gave up"]), "", [hang], hooks=Hooks(), tool_timeout=0.05
    )
    result = await asyncio.wait_for(agent.run("go"), 10)
    failed = next(m for m in result.transcript if m.role == "tool")
    assert failed.is_error and failed.text == "tool 'hang' timed out after 0.05 s"
    assert result.output == "gave up"


async def test_a_tools_own_timeout_goes_over_the_agents() -> None:
    slow = tool(timeout=0.05)(hang.fn)
    agent = Agent("a", ScriptedModel([calls("hang"), "gave up"]), "", [slow], hooks=Hooks())
    result = await asyncio.wait_for(agent.run("go"), 10)
    assert next(m for m in result.transcript if m.role == "tool").text == (
        "tool 'hang' timed out after 0.05 s"
    )


class Away:
    """A person who never answers; notes when the question is withdrawn."""

    def __init__(self) -> None:
        self.withdrawn = asyncio.Event()

    async def __call__(self, question: str, schema: Any, secret: bool) -> str:
        try:
            await asyncio.Event().wait()
        finally:
            self.withdrawn.set()
        return "never"


async def test_an_unanswered_question_ends_at_the_runs_elicit_timeout() -> None:
    away = Away()
    ctx = RunContext(elicitor=away, elicit_timeout=0.05)
    with pytest.raises(ElicitationError, match=r"no answer to 'Proceed\?' within 0.05 s"):
        await asyncio.wait_for(ctx.elicit("Proceed?"), 10)
    assert away.withdrawn.is_set()


async def test_a_questions_own_timeout_goes_over_the_runs() -> None:
    ctx = RunContext(elicitor=Away(), elicit_timeout=None)
    with pytest.raises(ElicitationError, match=r"within 0\.05 s"):
        await asyncio.wait_for(ctx.elicit("Proceed?", timeout=0.05), 10)

    async def quick(question: str, schema: Any, secret: bool) -> str:
        await asyncio.sleep(0.05)
        return "yes"

    ctx = RunContext(elicitor=quick, elicit_timeout=0.01)
    assert await ctx.elicit("Proceed?", timeout=None) == "yes"


async def test_a_tool_reads_the_timed_out_question_as_its_error() -> None:
    @tool
    async def confirm(ctx: RunContext) -> str:
        """Ask before acting."""
        return str(await ctx.elicit("Go ahead?"))

    agent = Agent(
        "a",
        ScriptedModel([calls("confirm"), "no answer"]),
        "",
        [confirm],
        hooks=Hooks(),
        elicitor=Away(),
    )
    ctx = agent.new_context()
    ctx.elicit_timeout = 0.05
    result = await asyncio.wait_for(agent.run("go", ctx=ctx), 10)
    failed = next(m for m in result.transcript if m.role == "tool")
    assert failed.text.startswith(
        "tool 'confirm' raised ElicitationError: no answer to 'Go ahead?'"
    )


@pytest.mark.parametrize("bad", [0, -1.0, True, "60"])
def test_a_deadline_must_be_positive_seconds_or_none(bad: Any) -> None:
    shown = re.escape(repr(bad))
    with pytest.raises(ConfigError, match=rf"RunContext.elicit_timeout={shown} must be a positive"):
        RunContext(elicit_timeout=bad)
    ctx = RunContext(elicitor=Away())
    with pytest.raises(ConfigError, match=rf"ctx.elicit timeout={shown} must be a positive"):
        asyncio.run(ctx.elicit("?", timeout=bad))
