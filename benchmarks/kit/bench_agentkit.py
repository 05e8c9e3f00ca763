"""agentkit's side: Kit construction (plugins already discovered) and kit.config() per run.

Construction is timed with the tools already wrapped (``@tool`` at import, as real code does),
with the ``agentsmd`` and ``skills`` parts added (they read files), and with the plain functions
wrapped inside the timing.

Prints one JSON line: the median microseconds of each, over ``rounds`` rounds of ``n`` calls.
Runs in an environment with core and every shipped plugin installed (``.ci/install-dev``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from common import instructions
from common import median_us
from common import tools

from agentkit_core import Kit
from agentkit_core import get_plugin_manager
from agentkit_core.testing import TestModel


def main() -> None:
    n, rounds = int(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "AGENTS.md").write_text("Answer in British English.\n")
        skill = root / "skills" / "release"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            "---\nname: release\ndescription: cut a release\n---\nTag.\n"
        )
        get_plugin_manager()  # discovery is not what is measured
        base = {
            "model": TestModel(),
            "instructions": instructions(),
            "tools": tools(),
            "compactor": "truncation",
            "compactor_options": {"max_tokens": 8000},
            "guardrail": "web",
        }
        parts = {"agentsmd": {"path": root}, "skills": {"dirs": [root / "skills"]}}
        kit = Kit(**base, parts=parts)
        assert "British English" in kit.config().instructions
        result = {
            "construct": median_us(lambda: Kit(**base), n, rounds),
            "construct_parts": median_us(lambda: Kit(**base, parts=parts), n, rounds),
            "construct_wrapping": median_us(lambda: Kit(**{**base, "tools": tools()}), n, rounds),
            "config": median_us(kit.config, n * 10, rounds),
        }
        print(json.dumps(result))


if __name__ == "__main__":
    main()
