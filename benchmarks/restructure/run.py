"""The core restructure (issue 34) side by side with the main before it: no figure worse by >5 %.

    git worktree add /tmp/agentkit-old 0a5d6fa      # the main the restructure started from
    python benchmarks/restructure/run.py --old /tmp/agentkit-old [--rounds 5]

Both trees run in this interpreter's environment (core and every plugin installed), each put
first on ``PYTHONPATH`` with its plugins, each with its own copy of the benchmark scripts (they
differ only in the doors they import from), so the only difference is the code. Each round runs
every benchmark once per tree, in its own process, the tree that goes first alternating from
round to round; the ratio new/old is taken within the round, and the table gives the median
ratio over the rounds with the range. Measured: the agent loop's per-turn overhead (core only,
and every plugin installed; benchmarks/agent_loop), the kit's construction and ``kit.config()``
(benchmarks/kit). Start-up (``import agentkit_core``, ``agentkit plugins list``) is measured
with farm-bench, whole processes paired (see RESULTS.md for the commands).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

NEW = Path(__file__).resolve().parent.parent.parent
#: (label, script, arguments, {figure: label}); each script prints one JSON line.
CASES = [
    (
        "agent loop, core only",
        Path("agent_loop/bench_agentkit.py"),
        ["--runs", "10"],
        {"turns_1_20_us": "µs per turn (turns 1-20)"},
    ),
    (
        "agent loop, every plugin installed",
        Path("agent_loop/bench_agentkit_installed.py"),
        ["--runs", "10"],
        {"turns_1_20_us": "µs per turn (turns 1-20)"},
    ),
    (
        "kit",
        Path("kit/bench_agentkit.py"),
        ["200", "5"],
        {"construct": "Kit(...) µs", "config": "kit.config() µs"},
    ),
]


def pythonpath(tree: Path) -> str:
    """The tree's core and each of its plugins, ahead of whatever is installed."""
    paths = [str(tree)] + [str(p) for p in sorted((tree / "plugins").iterdir()) if p.is_dir()]
    return os.pathsep.join(paths)


def measure(tree: Path, script: Path, args: list[str]) -> dict[str, float]:
    """The figures ``tree``'s own copy of ``script`` prints, run on ``tree``'s code."""
    script = tree / "benchmarks" / script
    env = {**os.environ, "PYTHONPATH": pythonpath(tree), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=script.parent,
        env=env,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", type=Path, required=True, help="a checkout of the old main")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_ in range(args.rounds):
        for label, script, extra, figures in CASES:
            trees = [("old", args.old), ("new", NEW)]
            if round_ % 2:
                trees.reverse()
            got = {name: measure(tree, script, extra) for name, tree in trees}
            for key, what in figures.items():
                rows.setdefault((label, what), []).append((got["old"][key], got["new"][key]))
        print(f"round {round_ + 1} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("| benchmark | figure | old main | restructured | new / old (range) |")
    print("|---|---|---:|---:|---:|")
    for (label, what), pairs in rows.items():
        ratios = [new / old for old, new in pairs]
        old_median = statistics.median(o for o, _ in pairs)
        new_median = statistics.median(n for _, n in pairs)
        print(
            f"| {label} | {what} | {old_median:.1f} | {new_median:.1f} | "
            f"**{statistics.median(ratios):.3f}x** ({min(ratios):.3f}-{max(ratios):.3f}) |"
        )


if __name__ == "__main__":
    main()
