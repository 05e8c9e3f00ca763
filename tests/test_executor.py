"""The executor seam: core's in-process executor, lookup by name, Kit options."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import SessionConflict
from agentkit_core import SessionNotFound
from agentkit_core import StepTimeoutError
from agentkit_core import ToolCall
from agentkit_core import ToolResult
from agentkit_core import UnknownNameError
from agentkit_core import Usage
from agentkit_core import tool
from agentkit_core.plugin import Executor
from agentkit_core.plugin import InProcessExecutor
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import get_executor
from agentkit_core.plugin import replayed_step
from agentkit_core.testing import ExecutorConformance
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import TestModel


class TestInProcessExecutor(ExecutorConformance):
    def make_executor(self, **options: Any) -> Executor:
        return InProcessExecutor(**options)


def test_the_default_executor_is_in_process() -> None:
    agent = Agent(model=TestModel())
    assert isinstance(agent.executor, InProcessExecutor)
    assert Kit(model=TestModel()).config().executor is None  # the agent's default


def test_kit_builds_the_named_executor_with_its_options() -> None:
    kit = Kit(model=TestModel(), executor="in-process", executor_options={"step_timeout": 5})
    executor = kit.config().executor
    assert isinstance(executor, InProcessExecutor) and executor.step_timeout == 5.0


def test_an_unknown_executor_lists_the_installed_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"'nope'.*in-process") as info:
        Kit(model=TestModel(), executor="nope")
    assert "in-process" in info.value.available


def test_an_unknown_option_is_named_with_the_options_there_are(pm) -> None:
    with pytest.raises(ConfigError, match=r"unknown option\(s\) 'databse'.*step_timeout"):
        get_executor("in-process", databse="x", manager=pm)


@pytest.mark.parametrize("bad", [0, -1, "5", True])
def test_a_bad_step_timeout_is_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match="step_timeout"):
        Kit(model=TestModel(), executor_options={"step_timeout": bad})


def test_options_with_an_executor_object_are_refused() -> None:
    with pytest.raises(ConfigError, match="options build a named executor"):
        Kit(model=TestModel(), executor=InProcessExecutor(), executor_options={"step_timeout": 1})


@pytest.mark.parametrize(
    "error",
    [
        SessionConflict("lost", session_id="s", after="a", leaf="b"),
        SessionNotFound("gone", session_id="s", item_id="i"),
        StepTimeoutError("slow", step="model:1", timeout=2.0),
        ConfigError("bad", value=[1], source="here"),
        UnknownNameError("who", name="x", available=("y",)),
    ],
)
def test_an_error_a_durable_executor_records_comes_back_whole(error: Exception) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error)
    assert again.__dict__ == error.__dict__


def test_a_replayed_step_counts_its_usage_and_makes_a_span_marked_replayed() -> None:
    agent = Agent("a", TestModel())
    ctx = agent.new_context("run-1")
    answer = Message.assistant("", [ToolCall("c1", "add", "{}")])
    response = ModelResponse(answer, Usage(7, 3, 1), "tool_calls", "m")
    with ctx.trace.span("run"):
        replayed_step(ctx, "model:1", "model", (response, []))
        replayed_step(ctx, "tool:add:c1", "tool", ToolResult.error("boom"))
        replayed_step(ctx, "session:1", "session", "item-id")
    assert (ctx.usage.input_tokens, ctx.usage.output_tokens) == (7, 3)
    [model] = ctx.trace.find("model_call")
    assert model.attributes["replayed"] is True and model.parent == "run"
    assert model.attributes["tool_call_names"] == ["add"]
    assert model.attributes["input_tokens"] == 7 and model.payload["response"] == answer
    [called] = ctx.trace.find("tool_call")
    assert called.attributes == {
        "tool": "add",
        "call_id": "c1",
        "replayed": True,
        "is_error": True,
        "result_chars": 4,
    }
    assert [s.name for s in ctx.trace.spans] == ["run", "model_call", "tool_call"]


class Steps(Executor):
    """Runs each step in the run's task, as the in-process executor does, noting its name."""

    name = "steps"

    def __init__(self) -> None:
        self.names: list[tuple[str, str, bool]] = []

    async def step(self, name: str, call: Any, *, kind: Any, idempotent: bool = True) -> Any:
        self.names.append((name, kind, idempotent))
        return await call()


async def test_an_executor_of_its_own_sees_every_step_of_a_run() -> None:
    # the in-process executor's steps are plain awaits; any other executor gets each step
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    script = ScriptedModel(
        [Message.assistant("", (ToolCall("c1", "shout", '{"text": "a"}'),)), "ok"]
    )
    steps = Steps()
    agent = Agent(model=script, tools=[tool(shout, idempotent=True)], executor=steps)
    assert (await agent.run("go")).output == "ok"
    assert steps.names == [
        ("model:1", "model", True),
        ("tool:shout:c1", "tool", True),
        ("model:2", "model", True),
    ]
