"""Real runs for the run viewer's tests: tool calls allowed, denied and asked, a failing tool, a
large result, a fold, and a suspension, traced into a trace file and checkpointed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentkit_core import Agent
from agentkit_core import Folding
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import hookimpl
from agentkit_core.cli import TraceFile
from agentkit_core.plugin import WorkingContext
from agentkit_core.testing import ScriptedModel

BIG = "".join(f"line {i}: the forecast stays sunny with a light breeze\n" for i in range(40))


def lookup(name: str) -> str:
    """Look up an account."""
    return f"account of {name}"


def forecast(city: str) -> str:
    """A long forecast."""
    return f"{city}\n{BIG}"


def boom() -> str:
    """A tool that fails."""
    raise RuntimeError("the disk is on fire")


def transfer(amount: int) -> str:
    """Move money."""
    return f"moved {amount}"


def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


class Policy:
    AGENTKIT_NAME = "policy"

    @hookimpl
    def agentkit_before_tool_call(self, ctx: Any, call: ToolCall) -> ToolDecision | None:
        if call.name == "transfer":
            return ToolDecision.ask("a person approves transfers")
        if call.name == "delete":
            return ToolDecision.deny("nothing is deleted")
        return None


HOOKS = Hooks.from_plugins(PluginManager(entry_points=False, plugins=[Policy()]))
TOOLS = [lookup, forecast, boom, transfer, delete]


def calls(turn: int, *named: tuple[str, dict[str, Any]]) -> Message:
    return Message.assistant(
        "",
        [ToolCall(f"t{turn}c{i}", n, json.dumps(a)) for i, (n, a) in enumerate(named)],
    )


def suspending_script() -> list[Any]:
    return [
        calls(1, ("lookup", {"name": "ann"}), ("delete", {"path": "/etc/passwd"})),
        calls(2, ("boom", {}), ("forecast", {"city": "Paris <script>alert(1)</script>"})),
        calls(3, ("transfer", {"amount": 5})),
    ]


def folding_script(turns: int) -> list[Any]:
    return [*(calls(i, ("lookup", {"name": f"n{i}"})) for i in range(1, turns + 1)), "all done"]


async def traced_runs(trace: Path, checkpointer: Any = None) -> list[Any]:
    """Two runs into one trace file: one suspends on an ask, one folds and answers."""
    results = []
    with TraceFile(trace) as exporter:
        first = Agent(
            "bank",
            ScriptedModel(suspending_script()),
            tools=TOOLS,
            hooks=HOOKS,
            exporters=[exporter],
            checkpointer=checkpointer,
        )
        results.append(await first.run("check ann's account"))
        history = [
            m
            for i in range(6)
            for m in (Message.user(f"question {i} " + "word " * 60), Message.assistant("ok"))
        ]
        folding = Folding(budget=300, keep_recent=120, model=ScriptedModel(["the story so far"]))
        second = Agent(
            "reader",
            ScriptedModel(folding_script(2)),
            tools=TOOLS,
            hooks=Hooks(),
            exporters=[exporter],
            compaction=folding,
        )
        results.append(await second.run("read on", wc=WorkingContext(messages=history)))
    return results


#: What ``agentkit run --tools tests.view_runs:CLI_TOOLS`` offers (TestModel calls each once).
CLI_TOOLS = [lookup, transfer]

#: A plugin module asking a person before every transfer, for ``agentkit run`` subprocesses.
POLICY_PLUGIN = """
from agentkit_core import ToolDecision, hookimpl


@hookimpl
def agentkit_before_tool_call(ctx, call):
    if call.name == "transfer":
        return ToolDecision.ask("a person approves transfers")
    return None
"""
