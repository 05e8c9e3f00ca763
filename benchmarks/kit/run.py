"""Run both sides in interleaved rounds and write RESULTS.md with the ratios and their ranges.

bash benchmarks/agent_loop/setup.sh         # the pydantic-ai venv this shares
python benchmarks/kit/run.py [--rounds R] [--samples S] [--n N]
                                            # in the environment with agentkit installed

Each round runs both sides once, each in its own process, the side that goes first alternating
from round to round, and takes every ratio within the round, so a slow spell of the shared
machine falls on both sides alike. The table gives the median over the rounds and the range; the
load average is read before and after every round.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import UTC
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
PYDANTIC_AI = HERE.parent / ".envs" / "agent_loop-pydantic-ai" / "bin" / "python"
#: Each side's interpreter and script; a round runs both, in alternating order.
SIDES = {
    "ours": (sys.executable, "bench_agentkit.py"),
    "theirs": (str(PYDANTIC_AI), "bench_pydantic_ai.py"),
}

ROWS = [
    ("theirs", "construct", "pydantic-ai `Agent(TestModel(), instructions=..., tools=[3 Tools])`"),
    (
        "ours",
        "construct",
        "agentkit `Kit(...)`: model, instructions, 3 tools, compactor, guardrail",
    ),
    ("ours", "construct_parts", "agentkit `Kit(...)`, adding the agentsmd and skills parts"),
    ("ours", "config", "agentkit `kit.config()`"),
    ("theirs", "construct_wrapping", "pydantic-ai, wrapping 3 plain functions"),
    ("ours", "construct_wrapping", "agentkit `Kit(...)`, wrapping 3 plain functions with `tool()`"),
]

TEMPLATE = """# Kit construction and kit.config()

Measured {when} on {machine}, {cpus} CPUs (shared, other jobs running: load average
{load_low:.1f}–{load_high:.1f} over the rounds), Python {python}, agentkit-core {ours_version},
pydantic-ai {theirs_version}, by `{command}`.

The kit is built with every shipped plugin installed and discovered beforehand, the way
`Kit(...)` always builds it: its agent folds every installed plugin's hooks (a kit has no
core-only `hooks=Hooks()` form, so there is no separate core-only row). It has a test model,
instructions, three tools, the `truncation` compactor and the `web` guardrail. A second row adds
the `agentsmd` and `skills` instruction parts over a temporary directory (one AGENTS.md, one
skill), which read and check files at construction (nothing pydantic-ai does). pydantic-ai
builds the equivalent Agent: its TestModel, the instructions and the same three functions.

Both sides are timed with the tools built beforehand (agentkit's `@tool`, pydantic-ai's
`Tool(f)`: what code that defines its tools at import does) and, in the last two rows, wrapping
the plain functions inside the timing. Each figure is the median over {rounds} interleaved
rounds with the range in brackets: a round runs each side once in its own process (the side that
goes first alternates from round to round), a process's figure being the median of {samples}
timings of {n} calls (`kit.config()`: ten times as many) with the collector off during a timing,
and the ratio to the pydantic-ai Agent is taken within each round.

| what | µs per call | × pydantic-ai Agent |
|---|---:|---:|
{table}

Targets (medians of the ratios taken within each round):

- `kit.config()` at most 0.05x constructing the pydantic-ai Agent: **{config:.4f}x**.
- the kit's construction no slower than it: **{construct:.2f}x** ({parts:.2f}x with the
  file-reading parts). Wrapping plain functions inside the timing on both sides:
  {wrapping:.2f}x; there the cost is pydantic building a model and a JSON Schema per
  function, on both sides.

`kit.config()` only gathers what construction assembled into a new `AgentConfig` (no discovery,
no rendering, no tool listing), which is why a per-run call costs a few microseconds.
"""


def side(who: str, n: int, samples: int) -> dict[str, float]:
    """One process of one side: µs per call of each thing it times."""
    python, script = SIDES[who]
    out = subprocess.run(
        [python, str(HERE / script), str(n), str(samples)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--samples", type=int, default=5, help="timings per process")
    parser.add_argument("--n", type=int, default=200, help="calls per timing")
    args = parser.parse_args()
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    rounds: list[dict[str, dict[str, float]]] = []
    loads: list[float] = []
    for r in range(args.rounds):
        order = ["ours", "theirs"] if r % 2 == 0 else ["theirs", "ours"]
        loads.append(os.getloadavg()[0])
        rounds.append({who: side(who, args.n, args.samples) for who in order})
        loads.append(os.getloadavg()[0])
        print(f"round {r + 1}: {rounds[-1]}", file=sys.stderr)

    def ratios(who: str, key: str, over: str = "construct") -> list[float]:
        """``who``'s ``key`` over pydantic-ai's ``over``, one ratio per round."""
        return [got[who][key] / got["theirs"][over] for got in rounds]

    table = "\n".join(
        f"| {label} | {spread([got[who][key] for got in rounds], ',.1f')} "
        f"| {spread(ratios(who, key), '.4f')} |"
        for who, key, label in ROWS
    )
    theirs_version = subprocess.run(
        [str(PYDANTIC_AI), "-c", "import pydantic_ai; print(pydantic_ai.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    text = TEMPLATE.format(
        when=started,
        machine=platform.machine(),
        cpus=os.cpu_count(),
        load_low=min(loads),
        load_high=max(loads),
        python=platform.python_version(),
        ours_version=version("agentkit-core"),
        theirs_version=theirs_version,
        command=f"python benchmarks/kit/run.py --rounds {args.rounds} --samples {args.samples} "
        f"--n {args.n}",
        rounds=args.rounds,
        samples=args.samples,
        n=args.n,
        table=table,
        config=statistics.median(ratios("ours", "config")),
        construct=statistics.median(ratios("ours", "construct")),
        parts=statistics.median(ratios("ours", "construct_parts")),
        wrapping=statistics.median(ratios("ours", "construct_wrapping", "construct_wrapping")),
    )
    (HERE / "RESULTS.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
