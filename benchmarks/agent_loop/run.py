"""Run every framework's script in its own venv, one after another, and write RESULTS.md.

    python benchmarks/agent_loop/run.py [--runs N]

``setup.sh`` makes the venvs under ``benchmarks/.envs/`` first (fast when they exist).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENVS = HERE.parent / ".envs"
#: (script, venv) per framework; the floor runs in agentkit's venv (it needs only Python).
CASES = [
    ("bench_floor.py", "agentkit"),
    ("bench_agentkit.py", "agentkit"),
    ("bench_agentkit_hooks.py", "agentkit"),
    ("bench_pydantic_ai.py", "pydantic-ai"),
    ("bench_openai_agents.py", "openai-agents"),
    ("bench_langgraph.py", "langgraph"),
    ("bench_langchain.py", "langchain"),
]
FLOOR, OURS, HOOKED = "plain asyncio loop", "agentkit", "agentkit + 7 hooks"
TARGET = 0.2
NOTES = """\
How each framework is driven (the stub's own work and the tools' work are not counted):

- agentkit: `Agent(..., hooks=Hooks())` with its default middlewares (tracing spans, metering,
  retry) on a `ScriptedModel` whose steps follow the script; its venv holds agentkit-core alone.
  "agentkit + 7 hooks" adds one plain-function hook with no opinion on every contested field,
  so every fold runs (calling, timing and checking each hook).
- pydantic-ai: `Agent(FunctionModel(fn), tools=[...])`, `UsageLimits(request_limit=None)`.
- OpenAI Agents SDK: `Runner.run` on a custom `Model` returning `ResponseFunctionToolCall`
  items, tracing disabled.
- LangGraph: `langgraph.prebuilt.create_react_agent`; LangChain: `langchain.agents.create_agent`;
  both on one stub `BaseChatModel` (`bind_tools` returns itself), `recursion_limit=1000`.
- plain asyncio loop: a list of dicts and a dict of functions, the floor.

Plain `def` tools are each framework's own business (called inline or sent to a worker thread),
and that cost is counted. The machine is shared, so figures move by some 10% between runs;
the ratios hold.
"""


@dataclass(frozen=True)
class Row:
    """One framework's figures for one tool kind, as its script printed them."""

    framework: str
    version: str
    tools: str
    turns_1_20_us: float
    turns_21_40_us: float
    whole_run_us_per_turn: float
    peak_kib: float


def measure(script: str, env: str, kind: str, runs: int) -> Row:
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
    return Row(**json.loads(proc.stdout.strip().splitlines()[-1]))


def table(rows: list[Row], kind: str) -> list[str]:
    """The Markdown table for one tool kind, with agentkit's ratio to the fastest peer."""
    rows = sorted((r for r in rows if r.tools == kind), key=lambda r: r.turns_1_20_us)
    fastest = next(r for r in rows if r.framework not in (FLOOR, OURS, HOOKED))
    base = fastest.turns_1_20_us
    lines = [
        f"| framework ({kind} tools) | version | µs/turn, turns 1–20 | × fastest peer "
        "| µs/turn, turns 21–40 | growth | µs/turn, whole 20-turn run | peak KiB |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.framework} | {r.version} | {r.turns_1_20_us:,.1f} "
            f"| {r.turns_1_20_us / base:.3f}x | {r.turns_21_40_us:,.1f} "
            f"| {r.turns_21_40_us / r.turns_1_20_us:.2f}x | {r.whole_run_us_per_turn:,.1f} "
            f"| {r.peak_kib:,.0f} |"
        )
    for ours in (r for r in rows if r.framework in (OURS, HOOKED)):
        ratio = ours.turns_1_20_us / base
        verdict = "met" if ratio <= TARGET else "MISSED"
        lines += [
            "",
            f"{ours.framework} / fastest peer ({fastest.framework}), {kind} tools: "
            f"**{ratio:.3f}x** (target ≤ {TARGET}x: {verdict})",
        ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    subprocess.run(["bash", str(HERE / "setup.sh")], check=True, stdout=subprocess.DEVNULL)
    rows = []
    for kind in ("async", "def"):
        for script, env in CASES:
            rows.append(measure(script, env, kind, args.runs))
            print(rows[-1], file=sys.stderr)
    out = [
        "# Agent loop: framework overhead per turn",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs (shared), Python {platform.python_version()}, by "
        f"`python benchmarks/agent_loop/run.py --runs {args.runs}`.",
        "",
        "An agent with three tools (`add`, `echo`, `upper`) and a stub model that calls one tool "
        "per turn for 40 turns, then answers. A turn's overhead is the time from the stub model "
        "returning to it being called again, minus the time inside the tool; the figures are "
        f"medians over {args.runs} runs. *Growth* is turns 21–40 over turns 1–20 (the transcript "
        "is twice as long). *Whole 20-turn run* is a run's wall time, less stub and tool time, "
        "over its 21 model calls (it includes setting the run up and the final answer). *Peak* is "
        "tracemalloc's peak of memory allocated during one 40-turn run.",
        "",
    ]
    for kind in ("async", "def"):
        out += [*table(rows, kind), ""]
    out.append(NOTES)
    (HERE / "RESULTS.md").write_text("\n".join(out), encoding="utf-8")
    print("\n".join(out))


if __name__ == "__main__":
    main()
