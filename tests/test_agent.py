"""The agent loop end to end with ScriptedModel: tools, errors, limits, hooks, typed output."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import MaxTurnsExceeded
from agentkit_core import Message
from agentkit_core import OutputValidationError
from agentkit_core import PluginManager
from agentkit_core import RunContext
from agentkit_core import Tool
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import ToolDefinitionError
from agentkit_core import ToolResult
from agentkit_core import hookimpl
from agentkit_core import tool
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.testing import ScriptedModel
from agentkit_core.testing import TestModel
from agentkit_core.testing import tool_call

NO_HOOKS = Hooks()


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first
        b: the second
    """
    return a + b


@tool
async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def calls(*items: ToolCall) -> Message:
    return Message.assistant("", items)


def tool_messages(transcript: list[Message]) -> list[Message]:
    return [m for m in transcript if m.role == "tool"]


async def test_tool_calls_loop_until_the_model_answers() -> None:
    model = ScriptedModel(
        [
            calls(tool_call("add", '{"a": 2, "b": 3}')),
            calls(tool_call("shout", '{"text": "done"}')),
            "The sum is 5.",
        ]
    )
    agent = Agent("calc", model, "You add.", [add, shout], hooks=NO_HOOKS)
    result = await agent.run("add 2 and 3")
    assert result.status == "done" and result.output == "The sum is 5."
    assert [m.text for m in tool_messages(result.transcript)] == ["5", "DONE"]
    assert [m.role for m in result.transcript] == [
        "system", "user", "assistant", "tool", "assistant", "tool", "assistant",
    ]  # fmt: skip
    assert result.usage.requests == 3
    # the tool result the model saw on the second call is the one the tool returned
    assert model.requests[1].messages[-1] == Message.tool("call_add", "5", name="add")
    assert [t.name for t in model.requests[0].tools] == ["add", "shout"]


async def test_parallel_calls_run_concurrently_and_keep_call_order() -> None:
    started: list[str] = []
    both = asyncio.Event()

    class Waiter(Tool):
        async def invoke(self, arguments: dict[str, Any], ctx: RunContext) -> ToolResult:
            started.append(self.name)
            if len(started) == 2:
                both.set()
            await asyncio.wait_for(both.wait(), 2)  # only returns if the other runs meanwhile
            return ToolResult(self.name)

    model = ScriptedModel([calls(tool_call("b"), tool_call("a")), "ok"])
    agent = Agent("p", model, tools=[Waiter("a"), Waiter("b")], hooks=NO_HOOKS)
    result = await agent.run("go")
    assert [m.text for m in tool_messages(result.transcript)] == ["b", "a"]
    assert not any(m.is_error for m in result.transcript)


async def test_a_sequential_tool_runs_alone() -> None:
    running = 0
    overlap: list[int] = []

    class Counted(Tool):
        async def invoke(self, arguments: dict[str, Any], ctx: RunContext) -> ToolResult:
            nonlocal running
            running += 1
            overlap.append(running)
            await asyncio.sleep(0.01)
            running -= 1
            return ToolResult("ok")

    tools = [Counted("x"), Counted("y"), Counted("lock", sequential=True)]
    model = ScriptedModel(
        [calls(tool_call("x", id="1"), tool_call("lock", id="2"), tool_call("y", id="3")), "ok"]
    )
    await Agent("s", model, tools=tools, hooks=NO_HOOKS).run("go")
    assert overlap == [1, 1, 1]


async def test_every_kind_of_tool_failure_reaches_the_model_as_a_tool_error() -> None:
    @tool(timeout=0.05)
    async def slow() -> str:
        """Never finishes in time."""
        await asyncio.sleep(5)
        return "late"

    @tool
    def broken() -> str:
        """Always fails."""
        raise ValueError("disk on fire")

    model = ScriptedModel(
        [
            calls(
                tool_call("nope", id="1"),
                tool_call("add", "{not json", id="2"),
                tool_call("add", '{"a": "two", "b": 1}', id="3"),
                tool_call("broken", id="4"),
                tool_call("slow", id="5"),
                tool_call("add", "[1, 2]", id="6"),
            ),
            "recovered",
        ]
    )
    result = await Agent("e", model, tools=[add, broken, slow], hooks=NO_HOOKS).run("x")
    errors = tool_messages(result.transcript)
    assert all(m.is_error for m in errors)
    texts = [m.text for m in errors]
    assert "unknown tool 'nope'; the tools are: add, broken, slow" in texts[0]
    assert "not valid JSON" in texts[1]
    assert "invalid arguments for tool 'add': a:" in texts[2]
    assert texts[3] == "tool 'broken' raised ValueError: disk on fire"
    assert texts[4] == "tool 'slow' timed out after 0.05 s"
    assert "must be a JSON object" in texts[5]
    assert result.output == "recovered"


async def test_max_turns_is_an_error_that_keeps_the_transcript() -> None:
    model = ScriptedModel([calls(tool_call("add", '{"a": 1, "b": 1}'))] * 3)
    agent = Agent("loop", model, tools=[add], max_turns=3, hooks=NO_HOOKS)
    with pytest.raises(MaxTurnsExceeded, match="max_turns=3") as info:
        await agent.run("forever")
    assert len(tool_messages(info.value.transcript)) == 3


async def test_an_empty_answer_is_a_clear_error() -> None:
    with pytest.raises(ProviderResponseError, match="empty answer"):
        await Agent("e", ScriptedModel([""]), hooks=NO_HOOKS).run("x")


def test_duplicate_tool_names_are_refused_naming_both() -> None:
    other = Tool("add", "another add")
    with pytest.raises(ToolDefinitionError, match="two tools named 'add'"):
        Agent("d", ScriptedModel([]), tools=[add, other], hooks=NO_HOOKS)


# ----------------------------------------------------------------- contested hooks


def plugin(name: str, log: list[str], priority: int = 0, **behaviour: Any) -> Any:
    class P:
        AGENTKIT_NAME = name
        AGENTKIT_PRIORITY = priority

        @hookimpl
        def agentkit_before_turn(self, ctx: Any, info: Any) -> list[Message]:
            log.append(f"{name}:before_turn:{info.turn}")
            return []

        @hookimpl
        def agentkit_transform(self, ctx: Any, transcript: list[Message]) -> None:
            log.append(f"{name}:transform")

        @hookimpl
        def agentkit_before_model_call(self, ctx: Any, request: ModelRequest) -> ModelRequest:
            log.append(f"{name}:before_model_call")
            note = Message.system(f"note from {name}")
            return ModelRequest((*request.messages, note), request.tools, request.output)

        @hookimpl
        def agentkit_before_tool_call(self, ctx: Any, call: ToolCall) -> Any:
            log.append(f"{name}:before_tool_call")
            return behaviour.get("decision")

        @hookimpl
        async def agentkit_after_tool_call(
            self, ctx: Any, call: ToolCall, result: ToolResult
        ) -> ToolResult:
            log.append(f"{name}:after_tool_call")
            return ToolResult(f"{result.content}|{name}", result.is_error)

        @hookimpl
        def agentkit_should_stop_after_turn(self, ctx: Any, turn: Any) -> str | None:
            log.append(f"{name}:should_stop")
            return behaviour.get("stop")

        @hookimpl
        def agentkit_output_guard(self, ctx: Any, message: Message) -> Message:
            log.append(f"{name}:output_guard")
            return Message.assistant(f"{message.text} [{name}]")

    return P()


def hooks_of(*plugins: Any) -> Hooks:
    return Hooks.from_plugins(PluginManager(entry_points=False, plugins=list(plugins)))


async def test_contested_hooks_fire_at_their_points_in_plugin_order() -> None:
    log: list[str] = []
    hooks = hooks_of(plugin("second", log), plugin("first", log, priority=10))
    model = ScriptedModel([calls(tool_call("add", '{"a": 1, "b": 2}')), "three"])
    result = await Agent("h", model, tools=[add], hooks=hooks).run("x")
    assert result.output == "three [first] [second]"
    assert tool_messages(result.transcript)[0].text == "3|first|second"
    assert [m.text for m in model.requests[0].messages[-2:]] == [
        "note from first",
        "note from second",
    ]
    per_turn = ["before_turn:1", "transform", "before_model_call", "before_tool_call"]
    expected = [f"{who}:{step}" for step in per_turn for who in ("first", "second")]
    expected += ["first:after_tool_call", "second:after_tool_call"]
    expected += ["first:should_stop", "second:should_stop"]
    assert log[: len(expected)] == expected
    assert log[-2:] == ["first:output_guard", "second:output_guard"]


async def test_deny_becomes_a_tool_error_naming_the_plugin() -> None:
    log: list[str] = []
    hooks = hooks_of(plugin("guard", log, decision=ToolDecision.deny("no adding on Sundays")))
    model = ScriptedModel([calls(tool_call("add", '{"a": 1, "b": 2}')), "fine"])
    result = await Agent("d", model, tools=[add], hooks=hooks).run("x")
    (denied,) = tool_messages(result.transcript)
    assert denied.is_error
    assert denied.text.startswith("tool call 'add' was denied by guard: no adding on Sundays")


async def test_ask_suspends_the_run_with_the_pending_calls() -> None:
    log: list[str] = []
    hooks = hooks_of(plugin("policy", log, decision=ToolDecision.ask("needs a human")))
    model = ScriptedModel([calls(tool_call("add", '{"a": 1, "b": 2}'))])
    result = await Agent("a", model, tools=[add], hooks=hooks).run("x")
    assert result.status == "suspended"
    assert [c.name for c in result.pending] == ["add"]
    assert result.stop_reason == "policy: needs a human"
    assert not tool_messages(result.transcript)  # nothing ran


async def test_should_stop_names_the_hook_that_stopped() -> None:
    log: list[str] = []
    hooks = hooks_of(plugin("a", log, stop="enough"), plugin("b", log, stop="me too"))
    model = ScriptedModel([calls(tool_call("add", '{"a": 1, "b": 2}'))])
    result = await Agent("s", model, tools=[add], hooks=hooks).run("x")
    assert (result.status, result.stop_reason) == ("stopped", "a: enough")
    assert "b:should_stop" not in log


# ----------------------------------------------------------------- typed output


@dataclass
class Plan:
    subject: str
    steps: list[str]


async def test_typed_output_is_parsed() -> None:
    model = ScriptedModel(['{"subject": "ship", "steps": ["build", "tag"]}'])
    result = await Agent("t", model, output=Plan, hooks=NO_HOOKS).run("plan")
    assert result.output == Plan("ship", ["build", "tag"])
    assert model.requests[0].output is not None
    assert model.requests[0].output.schema["required"] == ["subject", "steps"]


async def test_invalid_output_is_repaired_with_the_errors_sent_back() -> None:
    model = ScriptedModel(['{"subject": "ship"}', '{"subject": "ship", "steps": []}'])
    result = await Agent("t", model, output=Plan, hooks=NO_HOOKS).run("plan")
    assert result.output == Plan("ship", [])
    feedback = model.requests[1].messages[-1]
    assert feedback.role == "user" and "steps: Field required" in feedback.text


async def test_output_still_invalid_after_retries_carries_raw_and_errors() -> None:
    model = ScriptedModel(["not json", "still not", "nope"])
    agent = Agent("t", model, output=Plan, output_retries=2, hooks=NO_HOOKS)
    with pytest.raises(OutputValidationError, match="after 2 repair rounds") as info:
        await agent.run("plan")
    assert info.value.raw == "nope" and info.value.errors


async def test_test_model_calls_each_tool_with_valid_arguments_then_answers_typed() -> None:
    model = TestModel()
    result = await Agent("tm", model, tools=[add, shout], output=Plan, hooks=NO_HOOKS).run("go")
    assert not any(m.is_error for m in tool_messages(result.transcript))
    assert isinstance(result.output, Plan)
    called = [c.name for m in result.transcript for c in m.tool_calls]
    assert called == ["add", "shout"]


def test_run_sync_on_the_test_model_asked_for_by_name() -> None:
    result = Agent("sync", "test", hooks=NO_HOOKS).run_sync("hello")
    assert result.output.startswith("TestModel answer")
    assert json.loads(json.dumps(result.run_id))


def test_a_recorder_deriving_from_the_null_one_is_still_told_of_every_turn() -> None:
    # the loop skips the null recorder's no-op calls, and only for that exact class
    from agentkit_core._recorder import NullRecorder

    class Counting(NullRecorder):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[str] = []

        def record_response(self, *args: Any, **kwargs: Any) -> None:
            self.calls.append("response")

        def record_messages(self, *args: Any, **kwargs: Any) -> None:
            self.calls.append(kwargs["source"])

        async def flush(self) -> None:
            self.calls.append("flush")

    def echo(text: str) -> str:
        """Echo."""
        return text

    counting = Counting()
    script = ScriptedModel([Message.assistant("", (tool_call("echo", '{"text": "a"}'),)), "done"])
    agent = Agent(model=script, tools=[echo], hooks=Hooks(), recorder=counting)
    assert agent.run_sync("go").output == "done"
    # the batch is marked in flight (flushed) before the echo runs: it may not run twice
    assert counting.calls == ["response", "flush", "tool", "flush", "response", "flush"]
