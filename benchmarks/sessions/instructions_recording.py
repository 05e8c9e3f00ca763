"""What a recorded turn runs on ``memory://``, counted where load plays no part.

The agent_loop scenario (40 turns, one tool call a turn, core only: ``hooks=Hooks()``), run
without a session and recorded into a new ``memory://`` session per run.

    python benchmarks/sessions/instructions_recording.py bytecodes [--top 25]
        Python bytecodes a turn by function (``sys.settrace`` opcode events): what recording
        adds, function by function.
    valgrind --tool=callgrind python benchmarks/sessions/instructions_recording.py runs N KIND
        N more runs of KIND (``bare`` or ``recorded``) after the warm-up: the instructions a
        recorded turn adds are (recorded(25) - recorded(5) - bare(25) + bare(5)) / (20 * 40),
        so start-up and imports cancel (``--cache-sim=no``; the sixth pass used cachegrind,
        which counts the same instructions). KIND ``alone``: N * 40 turns of the recorder
        alone (a turn's record calls and its two flushes, no loop), counted the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "agent_loop"))

from bench_agentkit import Stamped  # noqa: E402
from common import ANSWER  # noqa: E402
from common import REC  # noqa: E402
from common import tools  # noqa: E402

from agentkit_core import Agent  # noqa: E402
from agentkit_core import Hooks  # noqa: E402
from agentkit_core import PluginManager  # noqa: E402
from agentkit_core import Recorder  # noqa: E402
from agentkit_core import Sessions  # noqa: E402
from agentkit_core.plugin import open_session_store  # noqa: E402

TURNS = 40


async def runs(count: int, recorded: bool, trace: Any = None) -> None:
    """``count`` runs of :data:`TURNS` turns after three of warm-up (``trace``d: ``settrace``)."""
    agent = Agent(
        "bench", Stamped(), "You are a benchmark.", tools("async"), hooks=Hooks(), max_turns=1000
    )
    sessions = Sessions(await open_session_store("memory://", manager=PluginManager()))
    for n in range(3 + count):
        if n == 3:
            sys.settrace(trace)
        ctx = agent.new_context()
        if recorded:
            ctx.recorder = await Recorder.start(sessions, {"model": "scripted"})
        REC.reset(TURNS)
        result = await agent.run("go", ctx=ctx)
        assert result.output == ANSWER, result.output
    sys.settrace(None)


async def alone(count: int) -> None:
    """``count`` turns of the recorder alone, as the loop records a turn: no agent, no tools."""
    from agentkit_core import Message
    from agentkit_core import ToolCall
    from agentkit_core import Usage

    sessions = Sessions(await open_session_store("memory://", manager=PluginManager()))
    ctx = Agent("a", "test", hooks=Hooks()).new_context()
    recorder = await Recorder.start(sessions, {"model": "scripted"})
    answer = Message.assistant("", [ToolCall("c1", "add", '{"a": 1, "b": 2}')])
    result = [Message.tool("c1", "3")]
    for _ in range(50 + count):  # the first 50 fill the caches
        recorder.record_response(ctx, answer, model="scripted", usage=Usage(10, 5))
        await recorder.flush()  # the mark: the answer and its call, before the tool runs
        recorder.record_messages(ctx, result, source="tool")
        await recorder.flush()


def bytecodes(recorded: bool) -> collections.Counter[str]:
    """Bytecodes run by each function (file:name) in one run, after the warm-up."""
    counts: collections.Counter[str] = collections.Counter()

    def opcode(frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode":
            code = frame.f_code
            counts[f"{Path(code.co_filename).name}:{code.co_name}"] += 1
        return opcode

    def call(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return opcode

    asyncio.run(runs(1, recorded, call))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    by = sub.add_parser("bytecodes")
    by.add_argument("--top", type=int, default=25)
    many = sub.add_parser("runs")
    many.add_argument("count", type=int)
    many.add_argument("kind", choices=("bare", "recorded", "alone"))
    args = parser.parse_args()
    if args.what == "runs":
        if args.kind == "alone":
            asyncio.run(alone(args.count * TURNS))
        else:
            asyncio.run(runs(args.count, args.kind == "recorded"))
        return
    extra = bytecodes(True)
    extra.subtract(bytecodes(False))
    top = sorted(extra.items(), key=lambda item: -abs(item[1]))[: args.top]
    print(
        json.dumps(
            {
                "added_per_turn": round(sum(extra.values()) / TURNS),
                "by_function": {k: round(v / TURNS, 1) for k, v in top if v},
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
