"""Run both sides in interleaved rounds and print the table RESULTS.md holds.

bash benchmarks/serve/setup.sh          # pydantic-ai's venv, with its AG-UI adapter
python benchmarks/serve/run.py [--rounds R] [--requests N] [--ours-only]
                                        # in the environment with agentkit and its serve plugins

Each round runs both sides once, each in its own process (the side that goes first alternates
from round to round); every difference and ratio is taken within a round, and the table gives
the median over the rounds with the range. The load average is read before and after each round.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
PYDANTIC_AI = HERE.parent / ".envs" / "serve-pydantic-ai" / "bin" / "python"
SIDES = {
    "ours": (sys.executable, "bench_agentkit.py"),
    "theirs": (str(PYDANTIC_AI), "bench_pydantic_ai.py"),
}
#: (side, row, label): the table's rows, in order.
ROWS = [
    ("ours", "inproc", "agentkit `Agent.run_stream_events`, in process"),
    ("ours", "floor", "HTTP floor: the same SSE events canned, no agent (agentkit's process)"),
    ("ours", "inproc_session", "agentkit, in process with the conversation's session"),
    ("ours", "agui", "agentkit AG-UI: POST, SSE read to `RUN_FINISHED`"),
    ("ours", "a2a_raw", "agentkit A2A `message/stream`, JSON-RPC over httpx"),
    ("ours", "a2a_floor", "A2A floor: the same server, an executor with no agent (same events)"),
    ("ours", "a2a_floor_sdk_store", "A2A floor with the SDK's `InMemoryTaskStore`"),
    ("ours", "a2a_stream", "agentkit A2A `message/stream` (a2a-sdk client)"),
    ("ours", "a2a_send", "agentkit A2A `message/send` (a2a-sdk client)"),
    ("theirs", "inproc", "pydantic-ai `Agent.run_stream_events`, in process"),
    ("theirs", "floor", "HTTP floor, in pydantic-ai's process"),
    ("theirs", "agui", "pydantic-ai AG-UI (`AGUIAdapter.dispatch_request`)"),
]


def side(who: str, requests: int, warmup: int) -> dict[str, dict[str, float]]:
    python, script = SIDES[who]
    out = subprocess.run(
        [python, str(HERE / script), "--requests", str(requests), "--warmup", str(warmup)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    result: dict[str, dict[str, float]] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200, help="requests per row and round")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--ours-only", action="store_true", help="agentkit's side alone (no pydantic-ai venv)"
    )
    args = parser.parse_args()
    sides = ["ours"] if args.ours_only else ["ours", "theirs"]
    rounds: list[dict[str, dict[str, dict[str, float]]]] = []
    loads: list[float] = []
    for r in range(args.rounds):
        order = sides if r % 2 == 0 else sides[::-1]
        loads.append(os.getloadavg()[0])
        rounds.append({who: side(who, args.requests, args.warmup) for who in order})
        loads.append(os.getloadavg()[0])
        print(f"round {r + 1}: {json.dumps(rounds[-1])}", file=sys.stderr)

    def per_round(who: str, row: str, key: str) -> list[float]:
        return [got[who][row][key] for got in rounds]

    def cpu(who: str, row: str) -> str:
        """The CPU µs to the first text, where the row marks it (not pydantic-ai's in process)."""
        if all("first_cpu_us" in got[who][row] for got in rounds):
            return spread(per_round(who, row, "first_cpu_us"), ",.0f")
        return ""

    def over(who: str, row: str, base: str, key: str = "end_us") -> list[float]:
        """``row`` less ``who``'s own in-process ``base``, µs, one figure per round."""
        return [got[who][row][key] - got[who][base][key] for got in rounds]

    def ratio(who: str, row: str, key: str) -> list[float]:
        """``row`` over pydantic-ai's AG-UI row, one ratio per round."""
        return [got[who][row][key] / got["theirs"]["agui"][key] for got in rounds]

    def times_own(who: str, row: str) -> list[float]:
        """``row``'s end over ``who``'s own in-process end, one ratio per round."""
        return [got[who][row]["end_us"] / got[who]["inproc"]["end_us"] for got in rounds]

    print(
        "| what | µs to first text | CPU µs to first text | µs to the end | "
        "+ over own in-process (end) | × pydantic-ai AG-UI (end) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for who, row, label in ROWS:
        if who not in sides:
            continue
        first = spread(per_round(who, row, "first_us"), ",.0f")
        end = spread(per_round(who, row, "end_us"), ",.0f")
        plus = "" if row == "inproc" else spread(over(who, row, "inproc"), ",.0f")
        times = spread(ratio(who, row, "end_us"), ".2f") if "theirs" in sides else ""
        print(f"| {label} | {first} | {cpu(who, row)} | {end} | {plus} | {times} |")
    print()
    for who, row in [
        ("ours", "agui"),
        ("ours", "a2a_raw"),
        ("ours", "a2a_floor"),
        ("ours", "a2a_floor_sdk_store"),
        ("ours", "a2a_stream"),
        ("theirs", "agui"),
    ]:
        if who not in sides:
            continue
        print(
            f"{who} {row}: first text + {spread(over(who, row, 'inproc', 'first_us'), ',.0f')} µs"
            f" over in process; end x{spread(times_own(who, row), '.2f')}"
        )
    for row in ("a2a_raw", "a2a_floor", "a2a_floor_sdk_store"):
        print(
            f"ours {row}: CPU to the first text + "
            f"{spread(over('ours', row, 'inproc', 'first_cpu_us'), ',.0f')} µs over in process"
        )
    for who in sides:
        print(
            f"{who} agui over the floor: + {spread(over(who, 'agui', 'floor'), ',.0f')} µs (end),"
            f" + {spread(over(who, 'agui', 'floor', 'first_us'), ',.0f')} µs (first text)"
        )
    print(
        "ours agui over its session run: + "
        f"{spread(over('ours', 'agui', 'inproc_session'), ',.0f')} µs (end), + "
        f"{spread(over('ours', 'agui', 'inproc_session', 'first_us'), ',.0f')} µs (first text)"
    )
    print(
        f"load average {min(loads):.1f}–{max(loads):.1f}; rounds {args.rounds}, "
        f"requests {args.requests}, warmup {args.warmup}"
    )


if __name__ == "__main__":
    main()
