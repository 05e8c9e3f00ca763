"""agentkit's per-turn overhead with the three guards' chain, on benchmarks/agent_loop's scenario.

The agent of ``benchmarks/agent_loop/bench_agentkit.py`` (a scripted model calling one tool a
turn, 40 turns), with ``guards=`` the chain of ``redact``, ``max-input`` and ``denylist`` (a
file of ten terms) when ``--guards`` is given, and every installed plugin's hooks when
``--installed`` is (core only otherwise, ``hooks=Hooks()``). Prints agent_loop's JSON line.
python benchmarks/guards/bench_turn.py [--guards] [--installed] --tools async --runs 20 --turns 40
"""

from __future__ import annotations

import functools
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))

from bench_agentkit import make
from common import main

from agentkit_core import PluginManager
from agentkit_core.plugin import build_guard_chain

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

TERMS = [f"codename-{i}" for i in range(9)] + ["re:\\bACME-\\d{3,}\\b"]


def chain() -> object:
    path = Path(tempfile.mkdtemp()) / "denylist.txt"
    path.write_text("\n".join(TERMS) + "\n", encoding="utf-8")
    return build_guard_chain(
        ["redact", "max-input", "denylist"],
        options={"max-input": {"max_tokens": 100_000}, "denylist": {"path": str(path)}},
        manager=PM,
    )


if __name__ == "__main__":
    options: dict[str, object] = {}
    label = "agentkit"
    if "--installed" in sys.argv:  # every installed plugin's hooks, as an Agent has by default
        sys.argv.remove("--installed")
        options["hooks"] = None
        label += ", every plugin installed"
    if "--guards" in sys.argv:
        sys.argv.remove("--guards")
        options["guards"] = chain()
        label += " + 3 guards"
    main(functools.partial(make, **options), label, "agentkit-core")
