"""Run every framework's script in interleaved repeated rounds and write RESULTS.md.

    python benchmarks/agent_loop/run.py [--rounds N] [--runs M]

Each round runs every (framework, tool kind) once, each in its own venv and process, in an
order rotated from round to round, so a slow spell of the shared machine falls on every
framework alike; each run is ``--runs`` 40-turn runs (after warm-up). Ratios to the fastest peer
are taken within a round; the tables give the median over the rounds and the range. The load
average is read before and after every round. ``setup.sh`` makes the venvs under
``benchmarks/.envs/`` first (fast when they exist).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
ENVS = HERE.parent / ".envs"
FLOOR = "plain asyncio loop"
CORE = "agentkit, core only"
INSTALLED = "agentkit, every plugin installed"
HOOKED = "agentkit + 7 hooks"
#: (script, venv, label, tool kinds); the floor runs in agentkit's venv (it needs only Python).
#: ``def-thread`` is agentkit's ``def`` tools with ``blocking=True``, reported in the def table.
CASES = [
    ("bench_floor.py", "agentkit", FLOOR, ("async", "def")),
    ("bench_agentkit.py", "agentkit", CORE, ("async", "def", "def-thread")),
    ("bench_agentkit_installed.py", "agentkit", INSTALLED, ("async", "def", "def-thread")),
    ("bench_agentkit_hooks.py", "agentkit", HOOKED, ("async",)),
    ("bench_pydantic_ai.py", "pydantic-ai", "pydantic-ai", ("async", "def")),
    ("bench_openai_agents.py", "openai-agents", "OpenAI Agents SDK", ("async", "def")),
    ("bench_langgraph.py", "langgraph", "LangGraph create_react_agent", ("async", "def")),
    ("bench_langchain.py", "langchain", "LangChain create_agent", ("async", "def")),
]
OURS = (CORE, INSTALLED, HOOKED)
#: Targets of the per-turn ratio to the fastest peer: agentkit with every plugin installed
#: (async tools), and like for like with def tools (blocking=True: on a worker thread).
TARGETS = {"async": 0.03, "def": 0.08}
NOTES = """\
How each framework is driven (the stub's own work and the tools' work are not counted):

- agentkit, every plugin installed: the venv holds core and every plugin under `plugins/`
  (editable, as `.ci/install-dev` installs them); the agent is `Agent(...)` with the defaults,
  so the process-wide plugin manager loads every installed plugin and the agent folds their
  contested hooks ({plugins}). Only the web guardrail implements any (before and after each tool
  call: the egress check of the arguments, the untrusted framing of the result); no guardrail is
  configured, so its hooks apply its defaults. Default middlewares (tracing spans, metering,
  retry), `ScriptedModel` steps that report usage as a provider does.
- agentkit, core only: the same agent with `hooks=Hooks()` (no plugin's hook is folded).
- agentkit + 7 hooks: core only plus one plain-function hook with no opinion on every contested
  field, so every fold runs (calling, timing and checking each hook).
- `blocking=True`: agentkit's `def` tools made with `tool(fn, blocking=True)`, so each call runs
  on a worker thread as the peers run a plain `def` tool: the like-for-like `def` row. Without
  it a `def` tool runs inline on the event loop (agentkit's default, for quick functions).
- pydantic-ai: `Agent(FunctionModel(fn), tools=[...])`, `UsageLimits(request_limit=None)`; `fn`
  is `async def` and its responses carry usage, so pydantic-ai neither sends it to a thread nor
  estimates tokens over the transcript after each call (a real provider causes neither).
- OpenAI Agents SDK: `Runner.run` on a custom `Model` returning `ResponseFunctionToolCall`
  items, tracing disabled.
- LangGraph: `langgraph.prebuilt.create_react_agent`; LangChain: `langchain.agents.create_agent`;
  both on one stub `BaseChatModel` (`bind_tools` returns itself), `recursion_limit=1000`.
- plain asyncio loop: a list of dicts and a dict of functions, the floor.

*Growth* is turns 21–40 over turns 1–20 of the same runs (the transcript is twice as long).
*Whole 20-turn run* is a run's wall time, less stub and tool time, over its 21 model calls
(setting the run up and the final answer included). *Peak* is tracemalloc's peak during one
40-turn run.
"""


@dataclass(frozen=True)
class Row:
    """One framework's figures for one tool kind in one round, as its script printed them."""

    framework: str
    version: str
    tools: str
    turns_1_20_us: float
    turns_21_40_us: float
    whole_run_us_per_turn: float
    peak_kib: float


def measure(script: str, env: str, kind: str, runs: int) -> tuple[Row, str]:
    python = ENVS / f"agent_loop-{env}" / "bin" / "python"
    proc = subprocess.run(
        [str(python), str(HERE / script), "--tools", kind, "--runs", str(runs)],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{script} --tools {kind} failed:\n{proc.stderr}")
    return Row(**json.loads(proc.stdout.strip().splitlines()[-1])), proc.stderr.strip()


def table(rounds: list[list[Row]], kind: str) -> list[str]:
    """The Markdown table for one tool kind: medians and ranges over the rounds."""
    by_name: dict[str, list[Row]] = {}
    ratios: dict[str, list[float]] = {}
    for rows in rounds:
        mine = [r for r in rows if r.tools == kind]
        peers = [r for r in mine if r.framework != FLOOR and not r.framework.startswith(OURS)]
        fastest = min(r.turns_1_20_us for r in peers)
        for r in mine:
            by_name.setdefault(r.framework, []).append(r)
            ratios.setdefault(r.framework, []).append(r.turns_1_20_us / fastest)
    order = sorted(by_name, key=lambda n: statistics.median(r.turns_1_20_us for r in by_name[n]))
    lines = [
        f"| framework ({kind} tools) | version | µs/turn, turns 1–20 | × fastest peer "
        "| µs/turn, turns 21–40 | growth | µs/turn, whole 20-turn run | peak KiB |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in order:
        rows = by_name[name]
        lines.append(
            f"| {name} | {rows[0].version} "
            f"| {spread([r.turns_1_20_us for r in rows], ',.1f')} "
            f"| {spread(ratios[name], '.3f')} "
            f"| {spread([r.turns_21_40_us for r in rows], ',.1f')} "
            f"| {spread([r.turns_21_40_us / r.turns_1_20_us for r in rows], '.2f')} "
            f"| {statistics.median(r.whole_run_us_per_turn for r in rows):,.1f} "
            f"| {statistics.median(r.peak_kib for r in rows):,.0f} |"
        )
    target = TARGETS[kind]
    judged = INSTALLED if kind == "async" else f"{INSTALLED}, blocking=True"
    for name in order:
        if not name.startswith(OURS):
            continue
        mid = statistics.median(ratios[name])
        verdict = ""
        if name == judged:
            verdict = f" (target ≤ {target}x: {'met' if mid <= target else 'MISSED'})"
        lines.append("")
        lines.append(
            f"{name} / fastest peer, {kind} tools: **{mid:.3f}x** "
            f"({min(ratios[name]):.3f}–{max(ratios[name]):.3f}x over the rounds){verdict}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subprocess.run(["bash", str(HERE / "setup.sh")], check=True, stdout=subprocess.DEVNULL)
    jobs = [(script, env, kind) for script, env, _, kinds in CASES for kind in kinds]
    rounds: list[list[Row]] = []
    loads: list[float] = []
    plugins = "the count was not printed"
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for n in range(args.rounds):
        shift = (n * len(jobs)) // args.rounds  # each round starts elsewhere in the list
        loads.append(os.getloadavg()[0])
        rows = []
        for script, env, kind in jobs[shift:] + jobs[:shift]:
            row, err = measure(script, env, kind, args.runs)
            rows.append(row)
            if "plugins loaded" in err:
                plugins = err.splitlines()[-1]
            print(f"round {n + 1}: {row}", file=sys.stderr)
        loads.append(os.getloadavg()[0])
        rounds.append(rows)
    out = [
        "# Agent loop: framework overhead per turn",
        "",
        f"Measured {started} on {platform.machine()}, {os.cpu_count()} CPUs (shared, other jobs "
        f"running: load average {min(loads):.1f}–{max(loads):.1f} over the rounds), Python "
        f"{platform.python_version()}, by `python benchmarks/agent_loop/run.py --rounds "
        f"{args.rounds} --runs {args.runs}`.",
        "",
        "An agent with three tools (`add`, `echo`, `upper`) and a stub model that calls one tool "
        "per turn for 40 turns, then answers. A turn's overhead is the time from the stub model "
        "returning to it being called again, minus the time inside the tool. Every framework ran "
        f"once per round, {args.rounds} interleaved rounds (the order rotated each round), each "
        f"run the median of {args.runs} 40-turn runs after three warm-up runs; each cell is the "
        "median over the rounds with the range in brackets, and a ratio to the fastest peer is "
        "taken within its round.",
        "",
    ]
    for kind in ("async", "def"):
        out += [*table(rounds, kind), ""]
    out.append(NOTES.format(plugins=plugins))
    (HERE / "RESULTS.md").write_text("\n".join(out), encoding="utf-8")
    print("\n".join(out))


if __name__ == "__main__":
    main()
