"""Long runs side by side: memory and per-turn cost at 100 and 1,000 turns (issue 36).

    python benchmarks/agent_loop/long_run.py [--rounds N] [--turns 100 1000]

Each framework's script runs once per round and length in its own venv and process
(``common.py --long``: one timed run, one traced run), in an order rotated from round to
round. The table gives the median over the rounds and the range; the peak's ratio to the
plain loop's, and each framework's last 100 turns over its first 100, are taken within a
round (so ``--only`` must keep ``bench_floor.py``). ``setup.sh`` makes the venvs first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
ENVS = HERE.parent / ".envs"
FLOOR = "plain asyncio loop"
#: (script, venv, label)
CASES = [
    ("bench_floor.py", "agentkit", FLOOR),
    ("bench_agentkit.py", "agentkit", "agentkit, core only"),
    ("bench_agentkit_installed.py", "agentkit", "agentkit, every plugin installed"),
    ("bench_pydantic_ai.py", "pydantic-ai", "pydantic-ai"),
    ("bench_openai_agents.py", "openai-agents", "OpenAI Agents SDK"),
    ("bench_langchain.py", "langchain", "LangChain create_agent"),
]


def measure(script: str, env: str, turns: int) -> dict[str, float]:
    python = ENVS / f"agent_loop-{env}" / "bin" / "python"
    proc = subprocess.run(
        [str(python), str(HERE / script), "--long", str(turns)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    figures: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, nargs="+", default=[100, 1000])
    parser.add_argument(
        "--only", nargs="+", default=[], help="scripts to run (bench_floor.py...), default all"
    )
    args = parser.parse_args()
    cases = [c for c in CASES if not args.only or c[0] in args.only]
    got: dict[tuple[str, int], list[dict[str, float]]] = {}
    loads: list[float] = []
    for round_ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        order = cases[round_ % len(cases) :] + cases[: round_ % len(cases)]
        for turns in args.turns:
            for script, env, label in order:
                got.setdefault((label, turns), []).append(measure(script, env, turns))
        print(f"round {round_ + 1} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    loads.append(os.getloadavg()[0])
    print(
        "| framework | turns | peak traced KiB | × plain loop | peak RSS MiB | µs/turn, turns "
        "1–100 | middle 100 | last 100 | last / first | whole run µs/turn |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for turns in args.turns:
        floors = [r["peak_kib"] for r in got[(FLOOR, turns)]]
        for _, _, label in cases:
            rows = got[(label, turns)]
            col = {k: [r[k] for r in rows] for k in rows[0] if isinstance(rows[0][k], float)}
            ratio = [r["peak_kib"] / f for r, f in zip(rows, floors, strict=True)]
            growth = [r["last_100_us"] / r["first_100_us"] for r in rows]
            rss = [r["rss_kib"] / 1024 for r in rows]
            print(
                f"| {label} | {turns:,} | {spread(col['peak_kib'], '.0f')} | "
                f"{spread(ratio)}x | {spread(rss, '.0f')} | {spread(col['first_100_us'], '.1f')} | "
                f"{spread(col['middle_100_us'], '.1f')} | {spread(col['last_100_us'], '.1f')} | "
                f"{spread(growth)}x | {spread(col['whole_us'], '.1f')} |"
            )
    print(
        f"\n{args.rounds} rounds, load average {min(loads):.1f}–{max(loads):.1f}, "
        f"median (range); {statistics.median(loads):.1f} median load."
    )


if __name__ == "__main__":
    main()
