"""The core restructure (issue 34) side by side with older mains: no figure worse by >5 %.

    git worktree add --detach /tmp/ak-0a5d6fa 0a5d6fa   # the main issue 34 was filed on
    git worktree add --detach /tmp/ak-99ea311 99ea311   # the main just before the restructure
    python benchmarks/restructure/run.py --old /tmp/ak-0a5d6fa --old /tmp/ak-99ea311 [--rounds 7]

Every tree runs in this interpreter's environment (core and every plugin installed), each put
first on ``PYTHONPATH`` with its plugins, each with its own copy of the benchmark scripts (they
differ only in the doors they import from), so the only difference is the code. Each round runs
every benchmark once per tree, in its own process, the trees in a new random order each round;
the ratio new/old is taken within the round, and the table gives the median ratio over the
rounds with the range, for each old tree. Measured: the agent loop's per-turn overhead (core
only, and every plugin installed; benchmarks/agent_loop, wall clock between the stub's stamps)
and its CPU time a turn (``cpu_turn.py``: one driver for every tree's own ``make``), the
kit's construction and ``kit.config()`` (benchmarks/kit) and the construction's CPU time
(``cpu_kit.py``). Start-up (``import agentkit_core``,
``agentkit plugins list``) is measured with whole processes paired (see the README's commands).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

NEW = Path(__file__).resolve().parent.parent.parent
CPU_TURN = Path(__file__).resolve().parent / "cpu_turn.py"
CPU_KIT = Path(__file__).resolve().parent / "cpu_kit.py"
#: The drivers kept here, and the folder of each tree's benchmarks they are given.
DRIVERS = {CPU_TURN: "agent_loop", CPU_KIT: "kit"}
#: (label, script, arguments, {figure: label}); each script prints one JSON line. A script
#: under the tree's ``benchmarks`` runs there; a driver of ``DRIVERS`` is given the tree's folder.
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
        "agent loop, core only",
        CPU_TURN,
        ["core", "--runs", "20"],
        {"cpu_us_per_turn": "CPU µs per turn (40-turn runs)"},
    ),
    (
        "agent loop, every plugin installed",
        CPU_TURN,
        ["installed", "--runs", "20"],
        {"cpu_us_per_turn": "CPU µs per turn (40-turn runs)"},
    ),
    (
        "kit",
        Path("kit/bench_agentkit.py"),
        ["200", "5"],
        {"construct": "Kit(...) µs", "config": "kit.config() µs"},
    ),
    ("kit", CPU_KIT, [], {"cpu_us": "Kit(...) CPU µs"}),
]


def pythonpath(tree: Path) -> str:
    """The tree's core and each of its plugins, ahead of whatever is installed."""
    paths = [str(tree)] + [str(p) for p in sorted((tree / "plugins").iterdir()) if p.is_dir()]
    return os.pathsep.join(paths)


def measure(tree: Path, script: Path, args: list[str]) -> dict[str, float]:
    """The figures ``tree``'s own copy of ``script`` prints, run on ``tree``'s code."""
    if script in DRIVERS:
        args = [str(tree / "benchmarks" / DRIVERS[script]), *args]
    else:
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
    parser.add_argument(
        "--old", type=Path, action="append", required=True, help="a checkout of an old main"
    )
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    trees = {str(tree): tree for tree in args.old} | {"new": NEW}
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    order = list(trees)
    for round_ in range(args.rounds):
        load = os.getloadavg()[0]
        for label, script, extra, figures in CASES:
            random.shuffle(order)
            got = {name: measure(trees[name], script, extra) for name in order}
            for key, what in figures.items():
                rows.setdefault((label, what), []).append({n: got[n][key] for n in trees})
        print(f"round {round_ + 1} done, load {load:.1f}-{os.getloadavg()[0]:.1f}", file=sys.stderr)
    print(table(rows, [str(tree) for tree in args.old]))


def table(rows: dict[tuple[str, str], list[dict[str, float]]], olds: list[str]) -> str:
    """Medians of every tree, and new/old's median ratio (range) for each old tree."""
    head = " | ".join(olds)
    lines = [
        f"| benchmark | figure | {head} | new | " + " | ".join(f"new / {o}" for o in olds) + " |",
        "|---|---|" + "---:|" * (2 * len(olds) + 1),
    ]
    for (label, what), rounds in rows.items():
        medians = [statistics.median(r[name] for r in rounds) for name in [*olds, "new"]]
        cells = []
        for old in olds:
            ratios = [r["new"] / r[old] for r in rounds]
            low, high = min(ratios), max(ratios)
            cells.append(f"**{statistics.median(ratios):.3f}x** ({low:.3f}-{high:.3f})")
        figures = " | ".join(f"{m:.1f}" for m in medians)
        lines.append(f"| {label} | {what} | {figures} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
