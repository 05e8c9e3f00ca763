"""Run both benchmarks, each side in its own processes, alternately; write RESULTS.md.

bash benchmarks/guards/setup.sh          # the LangChain venv
python benchmarks/guards/run.py [--before TREE] [--repeats N]   # with the guard plugins installed

``--before TREE`` (a checkout of an older commit) measures the per-turn cases there too, in the
same rounds (its core and plugins first on PYTHONPATH), for a before/after table.
"""

from __future__ import annotations

import json
import os
import platform
import random
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
ENVS = HERE.parent / ".envs"
#: The LangChain venv of setup.sh, or agent_loop's (the same langchain) when only that is built.
LANGCHAIN = next(
    (
        p
        for p in (ENVS / n / "bin" / "python" for n in ("guards-langchain", "agent_loop-langchain"))
        if p.exists()
    ),
    ENVS / "guards-langchain" / "bin" / "python",
)
#: Processes per side and case (``--repeats N``: more, when the machine is loaded).
REPEATS = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 5
ROUNDS, N = 5, 20  # redaction: rounds of N requests per process
RUNS, TURNS = 10, 40  # per-turn: runs of TURNS turns per process
CPU = ("--cpu", "5", "10", "40")  # per-turn CPU: rounds, runs, turns per process
#: The goal: what the three guards add to a short turn, core only (see RESULTS.md), CPU µs.
GOAL_US = 20.0

TEMPLATE = """# Guards: redacting a 100 KB request, and what the chain adds to a turn

Measured {when} on {machine} (2 cores shared with other jobs), Python {python},
agentkit-guard-redact {redact_version}, langchain {langchain_version}, by
`python benchmarks/guards/run.py` (after `bash benchmarks/guards/setup.sh`).

## Redaction of a 100 KB request

The request is one user message of ~100 KB of sentences with ~30 e-mail addresses and ~30
card numbers (Luhn-valid, in groups of four) in it (`workload.py`, seeded). agentkit runs the
`redact` guard with the same two detectors (`kinds=["card", "email"]`, its result cache off,
so every pass redacts anew) through `GuardChain.check_request`; LangChain runs
`PIIMiddleware("email")` then `PIIMiddleware("credit_card")` (strategy `redact`, each with its
Luhn check) through `before_model` on the same text, the second on what the first left. Each
figure is ms per request: the median of {repeats} alternating processes per side, each the
median of {rounds} rounds of {n} requests, with the collector off.

| | agentkit `redact` | LangChain `PIIMiddleware` ×2 | × LangChain |
|---|---:|---:|---:|
| ms per 100 KB request | {ours_ms:.2f} | {theirs_ms:.2f} | **{redact_ratio:.2f}x** |

Target: at most 0.3x. {redact_verdict}

Why it is faster: every detector has an anchor every match overlaps (`@` for an e-mail, a run
of digits for a card), found at C speed, and only the windows around the anchors are searched
with the full pattern; LangChain's patterns start a match attempt at every position of the
text.

## What the three guards add to a turn

The scenario of `benchmarks/agent_loop` (a scripted model calling one tool a turn, 40 turns,
async tools), without guards and with the chain of `redact`, `max-input` and `denylist` (ten
entries, one a regular expression), core only (`hooks=Hooks()`) and with every installed
plugin's hooks (an `Agent`'s default, as the README installs agentkit). Two figures a case,
each from its own process: **CPU µs a turn** over whole runs (`bench_turn.py --cpu`: the
process's CPU time over 5 rounds of 10 runs, the stub model and the tools included, which are
the same with and without guards), and agent_loop's **turn overhead** (wall clock from the
model returning to the model being called again, less the tool; turns 1–20). A repeat runs
every case once, in a new random order; each figure is the median over {repeats} repeats (the
range in brackets), and what the guards add is taken between the processes of one repeat
{before}; load average {load}.

{turn_table}

**The goal reads the first row: at most +{goal:.0f} µs a turn, core only.** {turn_verdict}
Core only is the three guards on a short turn (a tool result of a few characters: what the
goal calls short). With every plugin installed the web guardrail frames each tool result
between nonce-carrying delimiters (about 200 characters against 1–5, never the same twice), so
the guards read a text some forty times longer, and `redact` reads it with the tool results
before it (up to 1,024 characters, so that a secret split between results is still found):
that row is the guards over a long turn, reported beside the goal and not held to it.

Every run of a process is the same 40 turns, so from the second run on `redact` answers each
tool result from its result cache (`cache=1024`, keyed by the result and the text read around
it): the rows measure the chain and the guards' bookkeeping, not the detectors. A tool result
never seen before is read with the results before it (up to 1,024 characters): one search for
any detector's anchor, then the five detectors only when it finds one. Replaying one run's
requests through the chain with the cache off is in benchmarks/README.md (sixth pass).
"""


def run(python: str | Path, *args: str, path: str | None = None) -> dict[str, object]:
    """The last JSON line ``python args`` prints (``path``: a PYTHONPATH put first)."""
    env = None if path is None else {**os.environ, "PYTHONPATH": path}
    out = subprocess.run(
        [str(python), *args], cwd=HERE, capture_output=True, text=True, check=True, env=env
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def tree_path(tree: Path) -> str:
    """A checkout's core and plugins, first on ``PYTHONPATH`` (ahead of the installed ones)."""
    plugins = sorted(str(p) for p in (tree / "plugins").iterdir() if p.is_dir())
    return os.pathsep.join([str(tree), *plugins])


#: The per-turn cases: name, bench_turn.py flags.
CASES = {
    "bare": (),
    "guarded": ("--guards",),
    "installed": ("--installed",),
    "installed_guarded": ("--installed", "--guards"),
}
Figures = dict[tuple[str, str, str], list[float]]


def measure_turns(trees: dict[str, str | None], loads: list[float]) -> Figures:
    """Each tree's cases, CPU and wall, each repeat in a new order: by (tree, case, kind)."""
    figures: Figures = {}
    wall = ("--tools", "async", "--runs", str(RUNS), "--turns", str(TURNS))
    for _ in range(REPEATS):
        loads.append(os.getloadavg()[0])
        jobs = [(t, c, k) for t in trees for c in CASES for k in ("cpu", "wall")]
        random.shuffle(jobs)
        for tree, case, kind in jobs:
            args = (*CASES[case], *(CPU if kind == "cpu" else wall))
            row = run(sys.executable, "bench_turn.py", *args, path=trees[tree])
            value = row["cpu_us_per_turn" if kind == "cpu" else "turns_1_20_us"]
            figures.setdefault((tree, case, kind), []).append(float(value))  # type: ignore[arg-type]
    return figures


def turn_table(figures: Figures, trees: list[str]) -> tuple[str, dict[str, float]]:
    """The per-turn table, and the median the guards add by ``tree/case/kind``."""
    added: dict[str, float] = {}
    rows = ["| agentkit | figure | without guards | with the 3 guards | **added (paired)** |"]
    rows.append("|---|---|---:|---:|---:|")
    for setting, bare, guarded in (
        ("core only", "bare", "guarded"),
        ("every plugin installed", "installed", "installed_guarded"),
    ):
        for kind, label in (("cpu", "CPU µs a turn"), ("wall", "turn overhead µs")):
            for tree in trees:
                without = figures[(tree, bare, kind)]
                with_guards = figures[(tree, guarded, kind)]
                pairs = [g - b for g, b in zip(with_guards, without, strict=True)]
                added[f"{tree}/{bare}/{kind}"] = statistics.median(pairs)
                name = setting if tree == "now" else f"{setting}, before"
                rows.append(
                    f"| {name} | {label} | {spread(without, '.1f')} "
                    f"| {spread(with_guards, '.1f')} | **+{spread(pairs, '.1f')}** |"
                )
    return "\n".join(rows), added


def main() -> None:
    trees: dict[str, str | None] = {"now": None}
    before = ""
    if "--before" in sys.argv:
        tree = Path(sys.argv[sys.argv.index("--before") + 1]).resolve()
        trees["before"] = tree_path(tree)
        commit = subprocess.run(
            ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        before = f'("before": commit {commit}, measured in the same repeats)'
    ours, theirs = [], []
    loads: list[float] = []
    for _ in range(REPEATS):
        ours.append(run(sys.executable, "bench_redact_agentkit.py", str(ROUNDS), str(N))["ms"])
        theirs.append(run(LANGCHAIN, "bench_redact_langchain.py", str(ROUNDS), str(N))["ms"])
    figures = measure_turns(trees, loads)
    ours_ms = statistics.median(float(v) for v in ours)  # type: ignore[arg-type]
    theirs_ms = statistics.median(float(v) for v in theirs)  # type: ignore[arg-type]
    table, added = turn_table(figures, list(trees))
    redact_ratio = ours_ms / theirs_ms
    core = added["now/bare/cpu"]
    versions = run(
        LANGCHAIN,
        "-c",
        "import json, importlib.metadata as m; print(json.dumps({'v': m.version('langchain')}))",
    )
    stamp = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()} {platform.system()}",
        "python": platform.python_version(),
        "langchain_version": versions["v"],
    }
    text = TEMPLATE.format(
        **stamp,
        redact_version=version("agentkit-guard-redact"),
        repeats=REPEATS,
        rounds=ROUNDS,
        n=N,
        ours_ms=ours_ms,
        theirs_ms=theirs_ms,
        redact_ratio=redact_ratio,
        redact_verdict="Met." if redact_ratio <= 0.3 else "Missed; see benchmarks/README.md.",
        turn_table=table,
        before=before,
        load=f"{min(loads):.1f}–{max(loads):.1f}",
        goal=GOAL_US,
        turn_verdict=f"+{core:.1f} µs: {'met' if core <= GOAL_US else 'missed'}.",
    )
    (HERE / "RESULTS.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
