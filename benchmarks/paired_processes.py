"""Time two commands as whole processes, in turn (A B A B ...), and their ratio pair by pair.

Start-up figures (``import agentkit_core``, ``agentkit plugins list``, the first run) are a whole
process's cost, so they are timed from outside. Running the two commands in turn and taking the
ratio within each pair keeps it meaningful while the machine's speed drifts; CPU time (user +
system, from ``os.wait4``) moves less with other load than wall time. Standard library only.

    python benchmarks/paired_processes.py [-n 21] [--warmup 2] 'COMMAND A' 'COMMAND B'

Each command is split as a shell splits words and run without a shell. Prints, for A and B, the
median, minimum and maximum wall and CPU seconds, then A/B pair by pair (median, min–max), and
the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import time


def timed(argv: list[str]) -> tuple[float, float]:
    """One run of ``argv``: (wall seconds, CPU seconds of the process and its children)."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)!r} exited with {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def spread(values: list[float], unit: str = "") -> str:
    """Median (minimum–maximum), as the benchmarks' tables quote a figure."""
    return f"{statistics.median(values):.4g}{unit} ({min(values):.4g}–{max(values):.4g})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=21, help="pairs timed (default 21)")
    parser.add_argument("--warmup", type=int, default=2, help="pairs run first, not timed")
    parser.add_argument("a", help="the command measured")
    parser.add_argument("b", help="the command it is measured against")
    args = parser.parse_args()
    if args.n < 1 or args.warmup < 0:
        parser.error(f"-n must be at least 1 and --warmup at least 0 (got {args.n}, {args.warmup})")
    commands = (shlex.split(args.a), shlex.split(args.b))
    load_before = os.getloadavg()[0]
    for _ in range(args.warmup):
        for argv in commands:
            timed(argv)
    runs: tuple[list[tuple[float, float]], list[tuple[float, float]]] = ([], [])
    for _ in range(args.n):
        for argv, results in zip(commands, runs, strict=True):
            results.append(timed(argv))
    for label, results in zip("AB", runs, strict=True):
        wall = [w for w, _ in results]
        cpu = [c for _, c in results]
        print(f"{label}: wall {spread(wall, ' s')}, CPU {spread(cpu, ' s')}")
    for index, kind in enumerate(("wall", "CPU")):
        ratios = [a[index] / b[index] for a, b in zip(*runs, strict=True) if b[index] > 0]
        print(f"A/B {kind}: {spread(ratios, 'x')} over {len(ratios)} pairs")
    print(f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
