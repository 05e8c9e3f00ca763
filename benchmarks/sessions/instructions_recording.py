"""What a recorded turn runs on ``memory://``, counted where load plays no part.

The agent_loop scenario (40 turns, one tool call a turn, core only: ``hooks=Hooks()``), run
without a session and recorded into a new ``memory://`` session per run.

    python benchmarks/sessions/instructions_recording.py bytecodes [--top 25]
        Python bytecodes a turn by function (``agent_loop/common.py``'s counter, with
        ``sys.settrace`` opcode events): what recording adds, function by function.
    valgrind --tool=callgrind --cache-sim=no \\
        python benchmarks/sessions/instructions_recording.py runs N KIND
        N more runs of KIND (``bare`` or ``recorded``) after three of warm-up (then
        without the cyclic collector, and run with ``PYTHONHASHSEED=0``): the
        instructions a recorded turn adds are (recorded(25) - recorded(5) - bare(25) +
        bare(5)) / (20 * 40), so start-up and imports cancel (the sixth pass counted the same
        instructions with cachegrind). KIND ``alone``: N * 40 turns of the recorder alone (a
        turn's record calls and its two flushes, no loop), counted the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json

from bench_recording import one_run
from bench_recording import scenario  # puts benchmarks/agent_loop on the path
from common import bytecodes

from agentkit_core import Agent
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import Recorder
from agentkit_core import Sessions
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import open_session_store


def settle() -> None:
    """Collect, then count without the cyclic collector.

    Where a collection falls (a full one walks millions of instructions' worth of objects)
    moves the count by some 15k a turn from one process to another, and one side allocating
    less moves where they fall: the count is of the turn's own work, the collector's left out.
    """
    gc.collect()
    gc.disable()


#: Turns a run.
TURNS = 40


async def runs(count: int, recorded: bool) -> None:
    """``count`` runs of :data:`TURNS` turns after three of warm-up, core only."""
    agent = scenario(Hooks())
    sessions = Sessions(await open_session_store("memory://", manager=PluginManager()))
    for n in range(3 + count):
        if n == 3:
            settle()
        await one_run(agent, sessions if recorded else None, TURNS)


async def alone(turns: int) -> None:
    """``turns`` turns of the recorder alone, as the loop records a turn: no agent, no tools."""
    sessions = Sessions(await open_session_store("memory://", manager=PluginManager()))
    ctx = Agent("a", "test", hooks=Hooks()).new_context()
    recorder = await Recorder.start(sessions, {"model": "scripted"})
    answer = Message.assistant("", [ToolCall("c1", "add", '{"a": 1, "b": 2}')])
    result = [Message.tool("c1", "3")]
    for n in range(50 + turns):  # the first 50 fill the caches
        if n == 50:
            settle()
        recorder.record_response(ctx, answer, model="scripted", usage=Usage(10, 5))
        await recorder.flush()  # the mark: the answer and its call, before the tool runs
        recorder.record_messages(ctx, result, source="tool")
        await recorder.flush()


def by_function(recorded: bool) -> dict[str, int]:
    """Bytecodes each function runs in one run, after three runs of warm-up."""
    agent = scenario(Hooks())
    sessions = Sessions(asyncio.run(open_session_store("memory://", manager=PluginManager())))
    for _ in range(3):
        asyncio.run(one_run(agent, sessions if recorded else None, TURNS))
    return bytecodes(asyncio.run, one_run(agent, sessions if recorded else None, TURNS))


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
    extra = by_function(True)
    for name, n in by_function(False).items():
        extra[name] = extra.get(name, 0) - n
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
