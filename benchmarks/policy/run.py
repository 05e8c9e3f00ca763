"""Run both sides in interleaved rounds and write RESULTS.md with the ratios and their ranges.

bash benchmarks/policy/setup.sh          # the LangChain venv
python benchmarks/policy/run.py [--rounds R] [--samples S] [--batches N]
                                         # in the environment with agentkit-policy-rules installed

Each round runs both sides once, each in its own process, the side that goes first alternating
from round to round, and takes agentkit/LangChain within the round, so a slow spell of the shared
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

from workload import SIZES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
LANGCHAIN = HERE.parent / ".envs" / "policy-langchain" / "bin" / "python"
#: Each side's interpreter and script; a round runs both, in alternating order.
SIDES = {
    "ours": (sys.executable, "bench_agentkit.py"),
    "theirs": (str(LANGCHAIN), "bench_langchain.py"),
}

TEMPLATE = """# Deciding a tool call: a policy of 10 / 100 / 1,000 rules

Measured {when} on {machine}, {cpus} CPUs (shared, other jobs running: load average
{load_low:.1f}–{load_high:.1f} over the rounds), Python {python}, agentkit-policy-rules
{ours_version}, langchain {theirs_version}, by `{command}`
(after `bash benchmarks/policy/setup.sh`).

The policy gives every tool (`bash` and `tool_<i>`, one rule each) the same condition: a call
runs without a person only when its `command` is a read-only git command (`git status`, `git
log`, word by word). agentkit reads it from a policy file (an allow rule per tool with a
`prefix` matcher, plus a `git push` deny) and decides with `Policy.would`; LangChain's
`HumanInTheLoopMiddleware` gets `interrupt_on={{tool: {{"when": predicate}}}}` for every tool, the
predicate making the same word-by-word test, and decides in `after_model`. The batch decided is
three calls (two `bash`, one tool in the middle of the policy), all allowed, so neither side
stops for a person. Each figure is µs per call, the median over {rounds} interleaved rounds with
the range in brackets: a round runs each side once in its own process (the side that goes first
alternates from round to round), a process's figure being the median of {samples} timings of
{n} batches with the collector off, and the ratio to LangChain is taken within each round.

| rules | agentkit `Policy.would` | LangChain `after_model` | × LangChain |
|---:|---:|---:|---:|
{table}

Target: at most 0.2x LangChain, sub-linear in the rules. Sub-linear: 100 times the rules cost
**{growth:.2f}x** per call (medians; rules are indexed by tool name; the rest is the machine's
noise). The ratio: **{worst:.2f}x** (the table's highest median), the target missed; see
benchmarks/README.md for why.
"""


def side(who: str, samples: int, n: int) -> dict[int, float]:
    """One process of one side: µs per call for each policy size."""
    python, script = SIDES[who]
    out = subprocess.run(
        [python, str(HERE / script), str(samples), str(n)],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=True,
    )
    return {int(k): v for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--samples", type=int, default=5, help="timings per process")
    parser.add_argument("--batches", type=int, default=2_000, help="batches per timing")
    args = parser.parse_args()
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    ours: dict[int, list[float]] = {s: [] for s in SIZES}
    theirs: dict[int, list[float]] = {s: [] for s in SIZES}
    ratios: dict[int, list[float]] = {s: [] for s in SIZES}
    loads: list[float] = []
    for r in range(args.rounds):
        order = ["ours", "theirs"] if r % 2 == 0 else ["theirs", "ours"]
        loads.append(os.getloadavg()[0])
        got = {who: side(who, args.samples, args.batches) for who in order}
        loads.append(os.getloadavg()[0])
        for s in SIZES:
            ours[s].append(got["ours"][s])
            theirs[s].append(got["theirs"][s])
            ratios[s].append(got["ours"][s] / got["theirs"][s])
        print(f"round {r + 1}: {got}", file=sys.stderr)
    rows = [
        f"| {s:,} | {spread(ours[s], ',.1f')} | {spread(theirs[s], ',.1f')} "
        f"| {spread(ratios[s], '.2f')} |"
        for s in SIZES
    ]
    theirs_version = subprocess.run(
        [str(LANGCHAIN), "-c", "import importlib.metadata as m; print(m.version('langchain'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    text = TEMPLATE.format(
        when=started,
        machine=f"{platform.machine()} {platform.system()}",
        cpus=os.cpu_count(),
        load_low=min(loads),
        load_high=max(loads),
        python=platform.python_version(),
        ours_version=version("agentkit-policy-rules"),
        theirs_version=theirs_version,
        command=f"python benchmarks/policy/run.py --rounds {args.rounds} --samples "
        f"{args.samples} --batches {args.batches}",
        rounds=args.rounds,
        samples=args.samples,
        n=args.batches,
        table="\n".join(rows),
        growth=statistics.median(ours[SIZES[-1]]) / statistics.median(ours[SIZES[0]]),
        worst=max(statistics.median(ratios[s]) for s in SIZES),
    )
    (HERE / "RESULTS.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
