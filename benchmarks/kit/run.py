"""Run both sides alternately, in one go, and write RESULTS.md with the ratios.

bash benchmarks/agent_loop/setup.sh         # the pydantic-ai venv this shares
python benchmarks/kit/run.py                 # in the environment with agentkit installed
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

HERE = Path(__file__).resolve().parent
PYDANTIC_AI = HERE.parent / ".envs" / "agent_loop-pydantic-ai" / "bin" / "python"
N, ROUNDS, REPEATS = 200, 5, 5

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

Measured {when} on {machine}, Python {python}, agentkit-core {ours_version}, pydantic-ai
{theirs_version}, by `python benchmarks/kit/run.py`.

The kit is built with every shipped plugin installed and discovered beforehand: a test model,
instructions, three tools, the `truncation` compactor and the `web` guardrail. A second row adds
the `agentsmd` and `skills` instruction parts over a temporary directory (one AGENTS.md, one
skill), which read and check files at construction (nothing pydantic-ai does). pydantic-ai
builds the equivalent Agent: its TestModel, the instructions and the same three functions.

Both sides are timed with the tools built beforehand (agentkit's `@tool`, pydantic-ai's
`Tool(f)`: what code that defines its tools at import does) and, in the last two rows, wrapping
the plain functions inside the timing. Each figure is the median of {repeats} alternating
processes per side, each the median of {rounds} rounds of {n} calls (`kit.config()`: ten
times as many), with the collector off during a round.

| what | µs per call | × pydantic-ai Agent |
|---|---:|---:|
{table}

Targets:

- `kit.config()` at most 0.05x constructing the pydantic-ai Agent: **{config:.4f}x**.
- the kit's construction no slower than it: **{construct:.2f}x** ({parts:.2f}x with the
  file-reading parts). Wrapping plain functions inside the timing on both sides:
  {wrapping:.2f}x; there the cost is pydantic building a model and a JSON Schema per
  function, on both sides.

`kit.config()` only gathers what construction assembled into a new `AgentConfig` (no discovery,
no rendering, no tool listing), which is why a per-run call costs about a microsecond.
"""


def side(python: Path | str, script: str) -> dict[str, float]:
    out = subprocess.run(
        [str(python), str(HERE / script), str(N), str(ROUNDS)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    runs: dict[str, list[dict[str, float]]] = {"ours": [], "theirs": []}
    for _ in range(REPEATS):
        runs["ours"].append(side(sys.executable, "bench_agentkit.py"))
        runs["theirs"].append(side(PYDANTIC_AI, "bench_pydantic_ai.py"))

    def median(who: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[who])

    peer = median("theirs", "construct")
    table = "\n".join(
        f"| {label} | {median(who, key):,.1f} | {median(who, key) / peer:.4f}x |"
        for who, key, label in ROWS
    )
    theirs_version = subprocess.run(
        [str(PYDANTIC_AI), "-c", "import pydantic_ai; print(pydantic_ai.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    text = TEMPLATE.format(
        when=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        machine=platform.machine(),
        python=platform.python_version(),
        ours_version=version("agentkit-core"),
        theirs_version=theirs_version,
        repeats=REPEATS,
        rounds=ROUNDS,
        n=N,
        table=table,
        config=median("ours", "config") / peer,
        construct=median("ours", "construct") / peer,
        parts=median("ours", "construct_parts") / peer,
        wrapping=median("ours", "construct_wrapping") / median("theirs", "construct_wrapping"),
    )
    (HERE / "RESULTS.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
