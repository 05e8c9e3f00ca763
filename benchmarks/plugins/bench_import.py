"""Whole-process time of `import agentkit_core` beside `import pydantic_ai`, paired.

Each round starts one fresh process per command, in turn (A B C ... A B C ...), and takes each
process's wall time and CPU time (user + system, from the kernel's accounting of the reaped
child); the ratio to pydantic-ai is taken round by round, so a machine whose speed drifts during
the run moves both sides of a ratio together. Reports the median and the range over the rounds.
pydantic-ai lives in the peer venv benchmarks/.envs/agent_loop-pydantic-ai
(benchmarks/agent_loop/setup.sh makes it); agentkit runs in the interpreter running this script.

    python benchmarks/plugins/bench_import.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
PYDANTIC_AI = HERE.parent / ".envs" / "agent_loop-pydantic-ai" / "bin" / "python"
AGENTKIT = str(Path(sys.executable).parent / "agentkit")

COMMANDS = {
    "python -c pass (the interpreter alone)": [sys.executable, "-c", "pass"],
    "import agentkit_core": [sys.executable, "-c", "import agentkit_core"],
    "import agentkit_core; agentkit_core.Agent (first use)": [
        sys.executable,
        "-c",
        "import agentkit_core; agentkit_core.Agent",
    ],
    "agentkit plugins list": [AGENTKIT, "plugins", "list"],
    "import pydantic_ai": [str(PYDANTIC_AI), "-c", "import pydantic_ai"],
}
YARDSTICK = "import pydantic_ai"


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One fresh process: (wall seconds, CPU seconds of the child)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{cmd} exited {proc.returncode}: {proc.stderr.read().decode()}")
    proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    if not PYDANTIC_AI.exists():
        raise SystemExit(f"no {PYDANTIC_AI}: run benchmarks/agent_loop/setup.sh first")
    # bytecode caches on, as for a user; no PYTHONPATH or agentkit settings leaking in
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENTKIT_", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"))
    }
    for cmd in COMMANDS.values():  # warm-up: file cache and bytecode caches
        run(cmd, env)
    walls: dict[str, list[float]] = {label: [] for label in COMMANDS}
    cpus: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for _ in range(rounds):
        for label, cmd in COMMANDS.items():
            wall, cpu = run(cmd, env)
            walls[label].append(wall)
            cpus[label].append(cpu)
    print(f"{rounds} interleaved rounds; load average {os.getloadavg()[0]:.2f} at the end")
    print()
    print(
        "| command | wall ms, median (min–max) | CPU ms, median (min–max) "
        "| × import pydantic_ai (wall / CPU, median of pairs) |"
    )
    print("|---|---:|---:|---:|")
    for label in COMMANDS:
        wall_ratio = [a / b for a, b in zip(walls[label], walls[YARDSTICK], strict=True)]
        cpu_ratio = [a / b for a, b in zip(cpus[label], cpus[YARDSTICK], strict=True)]
        print(
            f"| {label} | {spread([w * 1000 for w in walls[label]], '.1f')} "
            f"| {spread([c * 1000 for c in cpus[label]], '.1f')} "
            f"| {statistics.median(wall_ratio):.3f}x / {statistics.median(cpu_ratio):.3f}x |"
        )


if __name__ == "__main__":
    main()
