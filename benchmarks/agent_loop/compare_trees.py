"""agentkit's per-turn figures on this tree beside another commit's, interleaved round by round.

    python benchmarks/agent_loop/compare_trees.py COMMIT [--rounds N] [--runs M] [--tools KIND]

The other commit's files are extracted (``git archive``) into a temporary directory and put
first on ``PYTHONPATH`` (core and every plugin's package), so the same venv
(``benchmarks/.envs/agent_loop-agentkit``, every plugin installed) runs both trees with the
same entry points. This tree's benchmark scripts drive both. Each round runs core only and
every plugin installed, on each tree, in an order rotated each round; the table gives medians
and ranges of µs per turn (turns 1–20) and this tree's ratio to the other within each round.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PYTHON = HERE.parent / ".envs" / "agent_loop-agentkit" / "bin" / "python"
SCRIPTS = {
    "core only": "bench_agentkit.py",
    "every plugin installed": "bench_agentkit_installed.py",
}


def extract(commit: str, into: Path) -> str:
    """The PYTHONPATH that puts ``commit``'s core and plugins first."""
    archive = into / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", commit], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    tree = into / "tree"
    return os.pathsep.join([str(tree), *(str(p) for p in sorted((tree / "plugins").iterdir()))])


def once(script: str, tools: str, runs: int, pythonpath: str | None) -> float:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.run(
        [str(PYTHON), script, "--tools", tools, "--runs", str(runs)],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["turns_1_20_us"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("commit")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tools", default="async", choices=("async", "def", "def-thread"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        other = extract(args.commit, Path(tmp))
        jobs = [(label, tree) for label in SCRIPTS for tree in ("this", "other")]
        got: dict[tuple[str, str], list[float]] = {job: [] for job in jobs}
        loads: list[float] = []
        for r in range(args.rounds):
            loads.append(os.getloadavg()[0])
            for label, tree in jobs[r % len(jobs) :] + jobs[: r % len(jobs)]:
                path = None if tree == "this" else other
                got[label, tree].append(once(SCRIPTS[label], args.tools, args.runs, path))
                print(
                    f"round {r + 1}: {label}, {tree}: {got[label, tree][-1]:.1f}", file=sys.stderr
                )

    print(f"| agentkit ({args.tools} tools), µs/turn 1–20 | {args.commit} | this tree | ratio |")
    print("|---|---:|---:|---:|")
    for label in SCRIPTS:
        this, that = got[label, "this"], got[label, "other"]
        ratios = [a / b for a, b in zip(this, that, strict=True)]
        print(
            f"| {label} | {spread(that, ',.1f')} | {spread(this, ',.1f')} "
            f"| {spread(ratios, '.2f')}x |"
        )
    print(
        f"\n{args.rounds} interleaved rounds, each the median of {args.runs} runs; load average "
        f"{min(loads):.1f}–{max(loads):.1f}."
    )


if __name__ == "__main__":
    main()
