"""Cold-process time of `agentkit plugins list` beside `llm plugins`, with and without 150 dummies.

Each figure is the median wall time of fresh processes (warm OS file cache, no shared interpreter).
The dummies are real distributions (.dist-info with entry points) in a directory put on
PYTHONPATH: 150 agentkit plugins each registering a compactor and a before_turn hook, and 150 llm
plugins each implementing register_commands. llm lives in benchmarks/.envs/llm
(`python -m venv benchmarks/.envs/llm && benchmarks/.envs/llm/bin/pip install llm`).

    python benchmarks/plugins/bench_startup.py
"""

from __future__ import annotations

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENVS = HERE.parent / ".envs"
LLM = ENVS / "llm" / "bin" / "llm"
RUNS = 11

AGENTKIT_PLUGIN = """from agentkit_core import hookimpl

@hookimpl
def agentkit_register_compactors(register):
    register("dummy-{i:03d}", object)

@hookimpl
def agentkit_before_turn(ctx, info):
    return None
"""

LLM_PLUGIN = """import llm

@llm.hookimpl
def register_commands(cli):
    pass
"""


def make_dummies(root: Path, group: str, template: str, requires: str, n: int = 150) -> Path:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for i in range(n):
        module = f"dummy_{group}_{i:03d}"
        (root / f"{module}.py").write_text(template.format(i=i))
        info = root / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\nRequires-Dist: {requires}\n"
        )
        (info / "entry_points.txt").write_text(f"[{group}]\ndummy-{i:03d} = {module}\n")
    compileall.compile_dir(root, quiet=1)  # as pip does on install
    return root


def cold(cmd: list[str], pythonpath: Path | None = None) -> float:
    # bytecode caches on, as for a user: the warm-up run writes them for sources that lack them
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENTKIT_", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"))
    }
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    subprocess.run(cmd, env=env, capture_output=True, check=True)  # warm the file cache
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    agentkit = [str(Path(sys.executable).parent / "agentkit"), "plugins", "list"]
    ak_dummies = make_dummies(
        ENVS / "dummies-agentkit", "agentkit", AGENTKIT_PLUGIN, "agentkit-core>=0.1,<1"
    )
    rows = [
        (
            "bare: python -c 'scan entry points'",
            [
                sys.executable,
                "-c",
                "import importlib.metadata as m; m.entry_points(group='agentkit')",
            ],
            None,
        ),
        ("agentkit plugins list (shipped plugins)", agentkit, None),
        ("agentkit plugins list (+150 dummies)", agentkit, ak_dummies),
    ]
    if LLM.exists():
        llm_dummies = make_dummies(ENVS / "dummies-llm", "llm", LLM_PLUGIN, "llm")
        rows += [
            ("llm plugins", [str(LLM), "plugins"], None),
            ("llm plugins (+150 dummies)", [str(LLM), "plugins"], llm_dummies),
        ]
    results = {label: cold(cmd, path) for label, cmd, path in rows}
    print("| command | median cold wall time (s) |")
    print("|---|---:|")
    for label, seconds in results.items():
        print(f"| {label} | {seconds:.3f} |")
    if LLM.exists():
        print()
        llm_plain = results["llm plugins"]
        for mine in ("(shipped plugins)", "(+150 dummies)"):
            ours = results[f"agentkit plugins list {mine}"]
            print(f"- agentkit plugins list {mine} / llm plugins: {ours / llm_plain:.2f}x")
        ours = results["agentkit plugins list (+150 dummies)"]
        theirs = results["llm plugins (+150 dummies)"]
        print(f"- both with 150 dummies: {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()
