"""Compacting long transcripts with tool calls: agentkit's compactors beside trim_messages.

The same transcript (a system message, then rounds of a question, an assistant message with
two parallel tool calls, their two results and an answer) is built once as agentkit messages
and once as langchain-core messages; only the compaction is timed.

- token budget: ``truncation`` (``max_tokens``) against ``trim_messages(strategy="last",
  include_system=True, start_on="human")`` with a per-message token counter that counts
  what agentkit's estimator counts (content, tool-call names, ids and arguments; 4 characters
  a token, 4 per message);
- message window: ``sliding-window`` (``keep_recent``) against the same ``trim_messages``
  call, and against ``trim_messages`` with ``token_counter=len`` (each message one "token");
- the kit's path: ``Kit(model=..., compactor="truncation" | "sliding-window")`` as the kit
  wires it, one model call through the agent's whole model-call chain (tracing, metering, retry,
  ``compaction()``) to a stub model that answers at once. "next turn" sends, each call, the
  transcript of the call before grown by one round (five messages), as a run's next turn does;
  "first request" sends the whole transcript to a kit that has not seen it (a new run over a
  long history). The requests' tuples are built before the timing: the agent loop's own
  ``tuple(transcript)`` per turn is not in these figures.

Both compactors walk the transcript back from its end (``units_from_end``), so their work is
proportional to what they keep, not to the transcript's length.

The contenders run in turn, one call each, round after round (the collector off during a call,
as ``timeit`` does); each figure is the median over the rounds with its range, and each ratio
the median of the ratios taken round by round.

    bash benchmarks/compaction/setup.sh      # prints the venv's python
    benchmarks/.envs/compaction-all/bin/python benchmarks/compaction/bench.py
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from collections.abc import Coroutine
from importlib.metadata import version
from pathlib import Path
from typing import Any

from agentkit_compactor_sliding_window import SlidingWindowCompactor
from agentkit_compactor_truncation import TruncationCompactor
from langchain_core.messages import AIMessage
from langchain_core.messages import BaseMessage
from langchain_core.messages import HumanMessage
from langchain_core.messages import SystemMessage
from langchain_core.messages import ToolMessage
from langchain_core.messages import trim_messages

from agentkit_core import Agent
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core._tokens import CHARS_PER_TOKEN
from agentkit_core._tokens import MESSAGE_OVERHEAD
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.testing import make_test_ctx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

SIZES = (1_000, 10_000, 100_000)
TOKEN_BUDGET = 8_000
WINDOW = 100
#: Rounds at each size; fewer at 100,000 messages, where trim_messages takes seconds.
ROUNDS = {1_000: 15, 10_000: 11, 100_000: 7}


def transcripts(n: int) -> tuple[list[Message], list[BaseMessage]]:
    """About ``n`` messages, five per round, as agentkit and as langchain messages."""
    ours: list[Message] = [Message.system("You are a research assistant.")]
    theirs: list[BaseMessage] = [SystemMessage("You are a research assistant.")]
    for i in range((n - 1) // 5):
        question = f"question {i}: what changed in release {i}?"
        args = [{"query": f"release {i} notes", "limit": 10}, {"path": f"docs/{i}.md"}]
        ids = [f"call_{i}_a", f"call_{i}_b"]
        results = [f"result {i}: " + "found " * 20, f"file {i}: " + "text " * 30]
        answer = f"In release {i} the parser got faster."
        calls = [
            ToolCall(ids[0], "search", json.dumps(args[0])),
            ToolCall(ids[1], "read", json.dumps(args[1])),
        ]
        ours += [
            Message.user(question),
            Message.assistant("", calls),
            Message.tool(ids[0], results[0], name="search"),
            Message.tool(ids[1], results[1], name="read"),
            Message.assistant(answer),
        ]
        theirs += [
            HumanMessage(question),
            AIMessage(
                "",
                tool_calls=[
                    {"name": "search", "args": args[0], "id": ids[0]},
                    {"name": "read", "args": args[1], "id": ids[1]},
                ],
            ),
            ToolMessage(results[0], tool_call_id=ids[0]),
            ToolMessage(results[1], tool_call_id=ids[1]),
            AIMessage(answer),
        ]
    return ours, theirs


def count_message(message: BaseMessage) -> int:
    """agentkit's estimate for one langchain message: content, tool-call names, ids, arguments."""
    chars = len(message.content) if isinstance(message.content, str) else 0
    for call in getattr(message, "tool_calls", ()):
        chars += len(call["name"]) + len(json.dumps(call["args"])) + len(call["id"] or "")
    return MESSAGE_OVERHEAD + (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def count_tokens(messages: list[BaseMessage]) -> int:
    """The list counter trim_messages calls (what it builds itself from a per-message one)."""
    return sum(count_message(m) for m in messages)


def run_now(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (a model-free compactor) without an event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError("the compactor suspended; it is not model-free")


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall time of one call (the collector off), in milliseconds; the result."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        return (time.perf_counter() - start) * 1000, result
    finally:
        gc.enable()


class StubModel:
    """A model that answers at once: what is left of a model call is the chain's own work."""

    name = "stub"

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.sent = len(request.messages)
        return ModelResponse(Message.assistant("ok"))

    async def stream(self, request: ModelRequest) -> Any:
        raise NotImplementedError


def kit_call(
    compactor: str, options: dict[str, Any], loop: asyncio.AbstractEventLoop
) -> Callable[[tuple[Message, ...]], int]:
    """One model call through the chain a Kit with ``compactor`` wires; returns what was sent."""
    model = StubModel()
    kit = Kit(model=model, compactor=compactor, compactor_options=options)
    ctx = Agent.from_config(kit.config()).new_context()
    assert ctx.invoker is not None

    def call(messages: tuple[Message, ...]) -> int:
        loop.run_until_complete(ctx.invoker.chat(ModelRequest(messages, ctx=ctx)))  # type: ignore[union-attr]
        return model.sent

    return call


def growing(
    call: Callable[[tuple[Message, ...]], int], ours: list[Message], rounds: int
) -> Callable[[], int]:
    """Each call sends the transcript of the call before grown by one round (5 messages)."""
    base = len(ours) - 5 * (rounds + 1)
    steps = iter([tuple(ours[: base + 5 * k]) for k in range(rounds + 2)])
    call(next(steps))  # the run's turns so far
    return lambda: call(next(steps))


def contenders(
    ours: list[Message], theirs: list[BaseMessage], rounds: int, loop: asyncio.AbstractEventLoop
) -> dict[str, Callable[[], Any]]:
    """Each way of compacting, as a call with no arguments (called once a round)."""
    ctx = make_test_ctx()
    truncation = TruncationCompactor(max_tokens=TOKEN_BUDGET)
    window = SlidingWindowCompactor(keep_recent=WINDOW)
    options = {
        "truncation": {"max_tokens": TOKEN_BUDGET},
        "sliding-window": {"keep_recent": WINDOW},
    }
    whole = tuple(ours)
    # one kit per round for "first request": built here, not inside the timing
    fresh = {
        name: iter([kit_call(name, o, loop) for _ in range(rounds)]) for name, o in options.items()
    }

    def trim(budget: int, counter: Callable[[list[BaseMessage]], int]) -> Callable[[], Any]:
        return lambda: trim_messages(
            theirs,
            max_tokens=budget,
            token_counter=counter,
            strategy="last",
            include_system=True,
            start_on="human",
        )

    return {
        "truncation": lambda: run_now(truncation.compact(ours, ctx)),
        "sliding-window": lambda: run_now(window.compact(ours, ctx)),
        "kit truncation, next turn": growing(
            kit_call("truncation", options["truncation"], loop), ours, rounds
        ),
        "kit sliding-window, next turn": growing(
            kit_call("sliding-window", options["sliding-window"], loop), ours, rounds
        ),
        "kit truncation, first request": lambda: next(fresh["truncation"])(whole),
        "kit sliding-window, first request": lambda: next(fresh["sliding-window"])(whole),
        "trim_messages, tokens": trim(TOKEN_BUDGET, count_tokens),
        "trim_messages, count": trim(WINDOW + 1, len),  # the system message counts one here
    }


RATIOS = [
    ("truncation", "trim_messages, tokens"),
    ("sliding-window", "trim_messages, tokens"),
    ("kit truncation, next turn", "trim_messages, tokens"),
    ("kit sliding-window, next turn", "trim_messages, tokens"),
    ("kit truncation, first request", "trim_messages, tokens"),
    ("kit sliding-window, first request", "trim_messages, tokens"),
    ("sliding-window", "trim_messages, count"),
]


def main() -> None:
    print(
        f"Python {platform.python_version()} on {platform.machine()}, langchain-core "
        f"{version('langchain-core')}; budget {TOKEN_BUDGET} tokens, window {WINDOW} "
        f"messages; rounds {ROUNDS}, contenders in turn, collector off; "
        f"load average {os.getloadavg()[0]:.2f} at the start\n"
    )
    loop = asyncio.new_event_loop()
    times: dict[int, dict[str, list[float]]] = {}
    for n in SIZES:
        ours, theirs = transcripts(n)
        calls = contenders(ours, theirs, ROUNDS[n], loop)
        times[n] = {name: [] for name in calls}
        kept: dict[str, int] = {}
        for _ in range(ROUNDS[n]):
            for name, fn in calls.items():
                ms, result = timed(fn)
                times[n][name].append(ms)
                kept[name] = result if isinstance(result, int) else len(result)
        print(f"{len(ours):,} messages kept: {kept}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    names = list(times[SIZES[0]])
    print("\nms per call, median (min–max):\n")
    print("| messages | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for n, row in times.items():
        print(f"| {n:,} | " + " | ".join(spread(row[name]) for name in names) + " |")
    print("\nRatios, median of the per-round ratios (min–max):\n")
    print("| messages | " + " | ".join(f"{a} / {b}" for a, b in RATIOS) + " |")
    print("|---" * (len(RATIOS) + 1) + "|")
    for n, row in times.items():
        cells = []
        for a, b in RATIOS:
            ratios = [x / y for x, y in zip(row[a], row[b], strict=True)]
            cells.append(spread(ratios, ".4f").replace(" (", "x (").replace(")", "x)"))
        print(f"| {n:,} | " + " | ".join(cells) + " |")
    print("\nGrowth per 10x messages (median time at 10n / median time at n):\n")
    print("| from | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for small, large in itertools.pairwise(SIZES):
        growth = " | ".join(
            f"{statistics.median(times[large][k]) / statistics.median(times[small][k]):.1f}x"
            for k in names
        )
        print(f"| {small:,} | {growth} |")


if __name__ == "__main__":
    main()
