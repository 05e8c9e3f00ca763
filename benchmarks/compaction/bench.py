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
Both compactors walk the transcript back from its end (``units_from_end``), so their work is
proportional to what they keep, not to the transcript's length.

Each call is timed with the garbage collector off (as ``timeit`` does), best of several.

    bash benchmarks/compaction/setup.sh      # prints the venv's python
    benchmarks/.envs/compaction/bin/python benchmarks/compaction/bench.py
"""

from __future__ import annotations

import gc
import itertools
import json
import platform
import time
from collections.abc import Callable
from collections.abc import Coroutine
from importlib.metadata import version
from typing import Any

from agentkit_compactor_sliding_window import SlidingWindowCompactor
from agentkit_compactor_truncation import TruncationCompactor
from langchain_core.messages import AIMessage
from langchain_core.messages import BaseMessage
from langchain_core.messages import HumanMessage
from langchain_core.messages import SystemMessage
from langchain_core.messages import ToolMessage
from langchain_core.messages import trim_messages

from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core._tokens import CHARS_PER_TOKEN
from agentkit_core._tokens import MESSAGE_OVERHEAD
from agentkit_core.testing import make_test_ctx

SIZES = (1_000, 10_000, 100_000)
TOKEN_BUDGET = 8_000
WINDOW = 100


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


def best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall time of ``repeats`` calls (the collector off), in milliseconds; the result."""
    times = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(times) * 1000, result


def contenders(ours: list[Message], theirs: list[BaseMessage]) -> dict[str, Callable[[], Any]]:
    """Each way of compacting, as a call with no arguments."""
    ctx = make_test_ctx()
    truncation = TruncationCompactor(max_tokens=TOKEN_BUDGET)
    window = SlidingWindowCompactor(keep_recent=WINDOW)

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
        "trim_messages, tokens": trim(TOKEN_BUDGET, count_tokens),
        "trim_messages, count": trim(WINDOW + 1, len),  # the system message counts one here
    }


RATIOS = [
    ("truncation", "trim_messages, tokens"),
    ("sliding-window", "trim_messages, tokens"),
    ("sliding-window", "trim_messages, count"),
]


def main() -> None:
    print(
        f"Python {platform.python_version()} on {platform.machine()}, langchain-core "
        f"{version('langchain-core')}; budget {TOKEN_BUDGET} tokens, window {WINDOW} "
        "messages; best of 7 (3 at 100,000 messages), collector off\n"
    )
    times: dict[int, dict[str, float]] = {}
    for n in SIZES:
        ours, theirs = transcripts(n)
        results: dict[str, Any] = {}
        times[n] = {}
        for name, fn in contenders(ours, theirs).items():
            times[n][name], results[name] = best(fn, 3 if n >= 100_000 else 7)
        kept = {name: len(r) for name, r in results.items()}
        print(f"{len(ours):,} messages kept: {kept}")
    names = list(times[SIZES[0]])
    print("\n| messages | " + " | ".join(f"{name} (ms)" for name in names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for n, row in times.items():
        print(f"| {n:,} | " + " | ".join(f"{row[name]:.2f}" for name in names) + " |")
    print("\n| messages | " + " | ".join(f"{a} / {b}" for a, b in RATIOS) + " |")
    print("|---" * (len(RATIOS) + 1) + "|")
    for n, row in times.items():
        print(f"| {n:,} | " + " | ".join(f"{row[a] / row[b]:.3f}x" for a, b in RATIOS) + " |")
    print("\nGrowth per 10x messages (time at 10n / time at n):\n")
    print("| from | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for small, large in itertools.pairwise(SIZES):
        growth = " | ".join(f"{times[large][k] / times[small][k]:.1f}x" for k in names)
        print(f"| {small:,} | {growth} |")


if __name__ == "__main__":
    main()
