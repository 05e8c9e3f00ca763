"""Instructions the three guards add to a turn, and a 100 KB redaction's, counted by callgrind.

The load does not move a count. Runs ``bench_turn.py --cpu 1 RUNS 40`` under ``valgrind
--tool=callgrind`` with and without ``--guards``, at two run counts, for each tree given
(``now``: this checkout, as the environment has it; ``--before TREE``: a checkout put first on
PYTHONPATH, as run.py does). What is not a turn (the interpreter, imports, the warm-up) cancels
in the difference between the counts; the guards' share is the guarded difference less the
bare one, a turn's worth of it. ``bench_redact_agentkit.py 1 N`` the same way at two N gives a
100 KB request's redaction.

python benchmarks/guards/instructions.py [--before TREE]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from run import tree_path

HERE = Path(__file__).resolve().parent
SMALL, LARGE, TURNS = 2, 12, 40


def instructions(path: str | None, *args: str) -> int:
    """The instructions callgrind counts in one process of ``python args``."""
    env = dict(os.environ) if path is None else {**os.environ, "PYTHONPATH": path}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, *args],
            cwd=HERE,
            env=env,
            check=True,
            capture_output=True,
        )
        found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
        assert found is not None, "callgrind wrote no total"
        return int(found.group(1))


def added(path: str | None) -> dict[str, float]:
    """Instructions a turn without guards, what the three add, and a 100 KB redaction's."""
    per_turn = {}
    for case, flags in (("bare", ()), ("guarded", ("--guards",))):
        turns = ("--cpu", "1", "{}", str(TURNS))
        per_turn[case] = between(path, ("bench_turn.py", *flags, *turns)) / TURNS
    redaction = between(path, ("bench_redact_agentkit.py", "1", "{}"))
    added = per_turn["guarded"] - per_turn["bare"]
    return {"turn": per_turn["bare"], "added": added, "redaction": redaction}


def between(path: str | None, args: tuple[str, ...]) -> float:
    """What one more unit (``{}`` in ``args``) of ``python args`` counts."""
    small = instructions(path, *(a.format(SMALL) for a in args))
    large = instructions(path, *(a.format(LARGE) for a in args))
    return (large - small) / (LARGE - SMALL)


if __name__ == "__main__":
    trees: dict[str, str | None] = {"now": None}
    if "--before" in sys.argv:
        trees["before"] = tree_path(Path(sys.argv[sys.argv.index("--before") + 1]).resolve())
    print(json.dumps({name: added(path) for name, path in trees.items()}))
