"""Run both sides alternately and write RESULTS.md with the ratios.

bash benchmarks/policy/setup.sh          # the LangChain venv
python benchmarks/policy/run.py          # in the environment with agentkit-policy-rules installed
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
from datetime import datetime
from datetime import timezone
from importlib.metadata import version
from pathlib import Path

from workload import SIZES

HERE = Path(__file__).resolve().parent
LANGCHAIN = HERE.parent / ".envs" / "policy-langchain" / "bin" / "python"
ROUNDS, N, REPEATS = 5, 2_000, 5

TEMPLATE = """# Deciding a tool call: a policy of 10 / 100 / 1,000 rules

Measured {when} on {machine}, Python {python}, agentkit-policy-rules {ours_version}, langchain
{theirs_version}, by `python benchmarks/policy/run.py` (after `bash benchmarks/policy/setup.sh`).

The policy gives every tool (`bash` and `tool_<i>`, one rule each) the same condition: a call
runs without a person only when its `command` is a read-only git command (`git status`, `git
log`, word by word). agentkit reads it from a policy file (an allow rule per tool with a
`prefix` matcher, plus a `git push` deny) and decides with `Policy.would`; LangChain's
`HumanInTheLoopMiddleware` gets `interrupt_on={{tool: {{"when": predicate}}}}` for every tool, the
predicate making the same word-by-word test, and decides in `after_model`. The batch decided is
three calls (two `bash`, one tool in the middle of the policy), all allowed, so neither side
stops for a person. Each figure is µs per call: the median of {repeats} alternating processes
per side, each the median of {rounds} rounds of {n} batches, with the collector off.

| rules | agentkit `Policy.would` | LangChain `after_model` | × LangChain |
|---:|---:|---:|---:|
{table}

Target: at most 0.2x LangChain, sub-linear in the rules. Sub-linear: 100 times the rules cost
**{growth:.2f}x** per call (rules are indexed by tool name; the rest is the machine's noise). The
ratio: **{worst:.2f}x**, the target missed; see benchmarks/README.md for why.
"""


def side(python: str, script: str) -> dict[int, float]:
    out = subprocess.run(
        [python, str(HERE / script), str(ROUNDS), str(N)],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=True,
    )
    return {int(k): v for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def main() -> None:
    ours: dict[int, list[float]] = {s: [] for s in SIZES}
    theirs: dict[int, list[float]] = {s: [] for s in SIZES}
    for _ in range(REPEATS):
        for size, us in side(sys.executable, "bench_agentkit.py").items():
            ours[size].append(us)
        for size, us in side(str(LANGCHAIN), "bench_langchain.py").items():
            theirs[size].append(us)
    mine = {s: statistics.median(v) for s, v in ours.items()}
    peer = {s: statistics.median(v) for s, v in theirs.items()}
    rows = [
        f"| {s:,} | {mine[s]:.1f} | {peer[s]:.1f} | **{mine[s] / peer[s]:.2f}x** |" for s in SIZES
    ]
    theirs_version = subprocess.run(
        [str(LANGCHAIN), "-c", "import importlib.metadata as m; print(m.version('langchain'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    text = TEMPLATE.format(
        when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        machine=f"{platform.machine()} {platform.system()}",
        python=platform.python_version(),
        ours_version=version("agentkit-policy-rules"),
        theirs_version=theirs_version,
        repeats=REPEATS,
        rounds=ROUNDS,
        n=N,
        table="\n".join(rows),
        growth=mine[SIZES[-1]] / mine[SIZES[0]],
        worst=max(mine[s] / peer[s] for s in SIZES),
    )
    (HERE / "RESULTS.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
