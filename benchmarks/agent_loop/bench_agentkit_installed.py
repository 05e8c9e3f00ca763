"""agentkit the way the README installs it: every shipped plugin discovered and loaded.

The same agent as ``bench_agentkit.py``, built as an ``Agent`` is by default (``hooks=None``:
the process-wide plugin manager loads every installed plugin through its entry points, and the
agent folds their contested hooks). The venv holds core and every plugin under ``plugins/``; the
web guardrail's hooks check each call's arguments and frame each result, and no other shipped
plugin implements a contested hook. The JSON line says how many plugins were loaded.
"""

from __future__ import annotations

import functools
import sys

from bench_agentkit import make
from common import main

from agentkit_core import get_plugin_manager

if __name__ == "__main__":
    loaded = [p for p in get_plugin_manager().plugins() if p.status == "loaded"]
    print(f"{len(loaded)} plugins loaded", file=sys.stderr)
    main(functools.partial(make, hooks=None), "agentkit, every plugin installed", "agentkit-core")
