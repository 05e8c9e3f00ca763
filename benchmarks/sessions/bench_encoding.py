"""What encoding a recorded turn's bodies costs: ``encode_state`` on each, by ``timeit``.

The two bodies a turn of the agent_loop scenario records on ``memory://`` (the model's answer
with its one tool call, and the tool's result), an answer carrying reasoning in its metadata,
and a checkpoint's state of a 40-turn transcript. Each figure is the least of three repeats of
many calls, in µs a call.

    python benchmarks/sessions/bench_encoding.py [--rounds 30] [--beside OLD_ENCODER]

``--beside`` loads another tree's ``agentkit_core/_encoder.py`` into this process beside the
installed one (the rest of the package is this one's), checks that both write the same text
for every body, and times the two in alternating rounds, the order flipping each round: the
median and range of the per-round ratio, and how many rounds the installed one was faster.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import timeit
from collections.abc import Callable
from types import ModuleType

from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import _encoder

RUN = "0123456789abcdef0123456789abcdef"


def bodies() -> dict[str, tuple[object, int]]:
    """Each body by name, with how many calls a repeat makes."""
    answer = Message.assistant("", [ToolCall("c1", "add", '{"a": 1, "b": 2}')])
    usage = {"input_tokens": 10, "output_tokens": 5}
    transcript = [Message.user("task")]
    for i in range(40):
        call = ToolCall(f"c{i}", "add", '{"a": 1, "b": 2}')
        transcript += [Message.assistant("", [call]), Message.tool(f"c{i}", "3")]
    reasoned = Message("assistant", "ok", metadata={"reasoning": "thought about it"})
    return {
        "a turn's response": (
            {"message": answer, "model": "scripted", "usage": usage, "finish_reason": None}
            | {"source": "model", "run": RUN},
            20_000,
        ),
        "a turn's tool result": ({"message": Message.tool("c1", "3"), "run": RUN}, 20_000),
        "an answer with reasoning metadata": ({"message": reasoned, "run": RUN}, 20_000),
        "a 40-turn transcript (81 messages)": ({"messages": transcript, "turn": 40}, 300),
    }


def beside(path: str) -> ModuleType:
    """The encoder module at ``path``, loaded into the installed package under another name."""
    spec = importlib.util.spec_from_file_location("agentkit_core._encoder_beside", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def timed(encode: Callable[[object], str], body: object, number: int) -> float:
    return min(timeit.repeat(lambda: encode(body), number=number, repeat=3)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--beside", help="another tree's agentkit_core/_encoder.py")
    args = parser.parse_args()
    other = beside(args.beside) if args.beside else None
    for name, (body, number) in bodies().items():
        mine = _encoder.encode_state
        if other is None:
            print(f"{name}: {min(timed(mine, body, number) for _ in range(args.rounds)):.3f} µs")
            continue
        theirs = other.encode_state
        assert mine(body) == theirs(body), name  # the same text, byte for byte
        a: list[float] = []
        b: list[float] = []
        for r in range(args.rounds):
            pair = [(theirs, a), (mine, b)] if r % 2 == 0 else [(mine, b), (theirs, a)]
            for encode, out in pair:
                out.append(timed(encode, body, number))
        ratios = [y / x for x, y in zip(a, b, strict=True)]
        print(
            f"{name}: beside {min(a):.3f} µs, this {min(b):.3f} µs (least of the rounds); "
            f"ratio {statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f}), "
            f"this lower in {sum(x < 1 for x in ratios)} of {args.rounds}"
        )


if __name__ == "__main__":
    main()
