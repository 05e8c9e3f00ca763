"""The Executor conformance suite: what every run executor must do, however it runs steps.

Subclass it in a test module whose name starts with ``Test`` and give it ``make_executor``,
which builds the executor with the options given (``step_timeout=`` among them)::

    class TestMyExecutor(ExecutorConformance):
        def make_executor(self, **options: Any) -> Executor:
            return MyExecutor(**options)

An executor that holds resources (a database, a runtime) closes them in ``close_executor``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .._agent import Agent
from .._executor import Executor
from .._executor import InProcessExecutor
from .._messages import Message
from .._plugins import PluginManager
from .._run_errors import StepTimeoutError
from .._tools import FunctionTool
from .._tools import Tool
from ._models import ScriptedModel
from ._models import Step
from ._models import tool_call
from ._registrations import check_declared_options


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def _slow() -> str:
    """Take a long time."""
    await asyncio.sleep(30)
    return "late"


def _script() -> list[Step]:
    return [
        Message.assistant("", [tool_call("add", '{"a": 2, "b": 3}', id="call_1")]),
        Message.assistant("", [tool_call("add", '{"a": 5, "b": 1}', id="call_2")]),
        "the sum is 6",
    ]


class ExecutorConformance:
    """Contract tests for an ``agentkit_core.plugin.Executor``; subclass, define the factory."""

    def make_executor(self, **options: Any) -> Executor:
        raise NotImplementedError("define make_executor() in the conformance subclass")

    def close_executor(self, executor: Executor) -> None:
        """Release what ``make_executor`` opened (nothing by default)."""

    def _agent(self, executor: Executor, tools: list[Tool], script: list[Step]) -> Agent:
        # no installed plugins: their hooks (an untrusted-output frame with a fresh id) would
        # make two runs' transcripts differ
        manager = PluginManager(entry_points=False)
        return Agent(
            "conformance", ScriptedModel(script), tools=tools, executor=executor, manager=manager
        )

    def test_is_an_executor(self) -> None:
        executor = self.make_executor()
        try:
            assert isinstance(executor, Executor)
            assert executor.name
        finally:
            self.close_executor(executor)

    def test_declared_options_are_taken_by_the_factory(self) -> None:
        executor = self.make_executor()
        try:
            check_declared_options(executor)
        finally:
            self.close_executor(executor)

    def test_a_run_is_the_same_as_in_process(self) -> None:
        reference = asyncio.run(
            InProcessExecutor().run(
                self._agent(InProcessExecutor(), [FunctionTool(_add, name="add")], _script()),
                "add",
                run_id="conformance-reference",
            )
        )
        executor = self.make_executor()
        try:
            agent = self._agent(executor, [FunctionTool(_add, name="add")], _script())
            result = asyncio.run(executor.run(agent, "add", run_id="conformance-run"))
        finally:
            self.close_executor(executor)
        assert result.status == "done"
        assert result.output == "the sum is 6"
        assert result.transcript == reference.transcript
        assert [m.content for m in result.transcript if m.role == "tool"] == ["5", "6"]

    def test_a_step_past_its_timeout_is_an_error_naming_the_step(self) -> None:
        executor = self.make_executor(step_timeout=0.2)
        script: list[Step] = [
            Message.assistant("", [tool_call("slow", "{}", id="call_1")]),
            "done",
        ]
        try:
            agent = self._agent(executor, [FunctionTool(_slow, name="slow")], script)
            with pytest.raises(StepTimeoutError, match="tool:slow:call_1") as info:
                asyncio.run(executor.run(agent, "wait", run_id="conformance-timeout"))
        finally:
            self.close_executor(executor)
        assert info.value.step == "tool:slow:call_1"
        assert info.value.timeout == 0.2
