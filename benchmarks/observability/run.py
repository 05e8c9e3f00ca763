"""Run the observability benchmarks and write RESULTS.md.

    bash benchmarks/observability/setup.sh
    python benchmarks/observability/run.py [--runs N]

Per-turn overhead: the agent-loop scenario of ``benchmarks/agent_loop`` (one tool call per turn
on a scripted model; the model's and the tools' own time not counted), for agentkit with no
exporter, with the tracing-otel plugin on a batch processor and a no-op exporter (without and
with content), and with a trace file on /dev/null; pydantic-ai beside it without and with its
own ``instrument=`` on the same no-op exporter. Each case runs in its own process, alternating,
and the figures are medians over rounds. Viewer: ``viewer.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
ENVS = HERE.parent / ".envs"
INSTALLED = "agentkit, every plugin installed"
CORE = "agentkit, core only"
#: (label, venv, script, exporter): agentkit as the README installs it (every plugin's hooks,
#: an Agent's default) and core only (``hooks=Hooks()``), pydantic-ai beside them.
OURS = ("none", "otel", "otel-content", "otel-sampled-out", "file")
THEIRS = ("none", "otel", "otel-content")
CASES = [
    *((INSTALLED, "agentkit-all", "otel_agentkit.py", x) for x in OURS),
    *((CORE, "agentkit-all", "otel_agentkit.py", x) for x in OURS),
    *(("pydantic-ai", "pydantic-ai", "otel_pydantic_ai.py", x) for x in THEIRS),
]


def one(
    env: str, script: str, exporter: str = "none", *args: str, hooks: str = "core"
) -> dict[str, Any]:
    """The JSON line ``script`` prints, run in the ``env`` venv with ``BENCH_EXPORTER``.

    ``hooks``: ``installed`` (every plugin's) or ``core`` (none), as ``BENCH_HOOKS``.
    """
    python = ENVS / f"observability-{env}" / "bin" / "python"
    out = subprocess.run(
        [str(python), str(HERE / script), *args],
        env={**os.environ, "BENCH_EXPORTER": exporter, "BENCH_HOOKS": hooks},
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    data: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--viewer", type=Path, help="viewer.py's JSON line, already measured")
    args = parser.parse_args()
    figures: dict[tuple[str, str], list[float]] = {(label, x): [] for label, _, _, x in CASES}
    versions: dict[str, str] = {}
    loads: list[float] = []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for label, env, script, exporter in CASES:
            hooks = "installed" if label == INSTALLED else "core"
            options = ("--runs", str(args.runs), "--turns", "40")
            data = one(env, script, exporter, *options, hooks=hooks)
            figures[(label, exporter)].append(float(data["whole_run_us_per_turn"]))
            versions[env] = str(data["version"])
    loads.append(os.getloadavg()[0])
    floor = one("agentkit-all", "sdk_floor.py")["sdk_us_per_turn"]
    if args.viewer is not None:
        viewer = json.loads(args.viewer.read_text())
    else:
        viewer = one("agentkit-all", "viewer.py")
    write(figures, floor, viewer, versions, args, loads)
    print((HERE / "RESULTS.md").read_text())


def write(
    figures: dict[tuple[str, str], list[float]],
    floor: float,
    viewer: dict[str, Any],
    versions: dict[str, str],
    args: argparse.Namespace,
    loads: list[float],
) -> None:
    per_turn = {key: statistics.median(values) for key, values in figures.items()}
    lines = [
        "# Observability: tracing overhead, the viewer on long runs",
        "",
        f"CPython {platform.python_version()}, agentkit-core {versions.get('agentkit-all')}, "
        f"pydantic-ai-slim {versions.get('pydantic-ai')}; the shared 2-core machine. "
        f"{args.rounds} interleaved rounds of {args.runs} runs of 20 and 40 turns per case; "
        f"each cell the median over the rounds and the range, each ratio taken within its "
        f"round; load average {min(loads):.1f}–{max(loads):.1f}.",
        "",
        "## Per-turn overhead with OpenTelemetry on a no-op exporter",
        "",
        "| framework | exporter | µs per turn | vs the same framework without |",
        "|---|---|---:|---:|",
    ]
    for label, _, _, exporter in CASES:
        values = figures[(label, exporter)]
        ratios = [v / b for v, b in zip(values, figures[(label, "none")], strict=True)]
        lines.append(
            f"| {label} | {exporter} | {spread(values, ',.1f')} | {spread(ratios, '.2f')}x |"
        )
    sizes = viewer["sizes"]
    assert isinstance(sizes, dict)
    lines += [
        "",
        "Target: agentkit with the OpenTelemetry plugin ≤ 1.5x agentkit without (judged with "
        "every plugin installed).",
        "",
        f"The OpenTelemetry SDK alone, making the very spans the plugin makes for a run (a turn, "
        f"a model call and a tool call a turn, under the run's) on the same processor and "
        f"exporter, in a tight loop with nothing of agentkit (`sdk_floor.py`), takes "
        f"{floor:.0f} µs a turn: with agentkit's "
        f"{per_turn[(INSTALLED, 'none')]:.0f} µs turn that is a floor of "
        f"{(per_turn[(INSTALLED, 'none')] + floor) / per_turn[(INSTALLED, 'none')]:.2f}x for "
        "any exporter that makes those spans, before agentkit's own work. The 1.5x target is "
        "missed for that reason: agentkit's turn is some "
        f"{per_turn[('pydantic-ai', 'none')] / per_turn[(INSTALLED, 'none')]:.0f} times cheaper "
        "than pydantic-ai's, so the same SDK cost is a larger share of it. In absolute terms "
        "agentkit with the "
        f"plugin adds {per_turn[(INSTALLED, 'otel')] - per_turn[(INSTALLED, 'none')]:.0f} µs "
        "a turn, pydantic-ai's instrumentation "
        f"{per_turn[('pydantic-ai', 'otel')] - per_turn[('pydantic-ai', 'none')]:.0f} µs. "
        "With content, each message is encoded once per run and the request's list is joined "
        "from those encodings. `file` is a trace file (`agentkit run --trace`) on /dev/null: "
        "every span serialized with its payload and flushed as written.",
        "",
        "Against the SDK's own calls for the very same spans, made at the same points of a run "
        "and in a tight loop (`paired.py`, CPU time, one process; issue 36's ≤ 1.1x): "
        "RESULTS-floor.md.",
        "",
        "## The viewer on long runs",
        "",
        "`agentkit view`'s work (read the trace file, build the run view, write the page), best of",
        "five, on real traced runs calling one tool per turn.",
        "",
        "| turns | render ms | µs per turn | trace KiB | page KiB |",
        "|---:|---:|---:|---:|---:|",
    ]
    for turns, row in sizes.items():
        lines.append(
            f"| {turns} | {row['render_ms']:.0f} | {row['us_per_turn']:.0f} | "
            f"{row['trace_kib']:.0f} | {row['page_kib']:.0f} |"
        )
    chromium = viewer["chromium_1000"]
    assert isinstance(chromium, dict)
    lines += [
        "",
        f"Per-turn time from 100 to 3,000 turns: {viewer['per_turn_growth_100_to_3000']:.2f}x "
        "(linear is 1x).",
        "",
        "Headless Chromium (Debian's package) opening the 1,000-turn page, every turn present "
        f"in the DOM: first contentful paint {chromium['first_paint_ms']:.0f} ms, load event "
        f"{chromium['load_event_ms']:.0f} ms (median of three fresh profiles).",
        "",
        "Reproduce: `bash benchmarks/observability/setup.sh && python "
        "benchmarks/observability/run.py`",
        "",
    ]
    (HERE / "RESULTS.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
