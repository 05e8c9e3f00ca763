"""docs/tutorial-plugin.md, run as written: in an empty directory outside the repository.

Its ```bash blocks run in order as one script; a ```python block whose first line is a
``# path/to/file.py`` comment is the content the reader puts in that file, written at that
point. pip finds agentkit in the wheelhouse (the tutorial's PIP_FIND_LINKS step) and nothing
else: no index, so no network.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "tutorial-plugin.md"
FENCE = re.compile(r"^```(bash|python)[^\n]*\n(.*?)^```", re.S | re.M)
FILE = re.compile(r"# ([\w./-]+\.py)\n")


def tutorial_script(text: str) -> str:
    """The tutorial as one bash script: its commands, and its files written where it says."""
    lines = ["set -euo pipefail"]
    for language, body in FENCE.findall(text):
        if language == "bash":
            lines.append(body)
            continue
        path = FILE.match(body)
        if path is not None:
            lines.append(f"cat > {path.group(1)} <<'TUTORIAL_FILE'\n{body}TUTORIAL_FILE")
    return "\n".join(lines) + "\n"


def test_the_script_has_every_command_and_file() -> None:
    script = tutorial_script(DOC.read_text(encoding="utf-8"))
    for needed in (
        "agentkit plugins new compactor keep-task",
        "pip install -e ./agentkit-compactor-keep-task",
        "cat > agentkit-compactor-keep-task/agentkit_compactor_keep_task/__init__.py <<",
        "cat > agentkit-compactor-keep-task/tests/test_keep_task.py <<",
        "--compactor keep-task",
    ):
        assert needed in script


def test_the_tutorial_runs_as_written(tmp_path: Path, wheelhouse: Any) -> None:
    outer = {sys.prefix, os.environ.get("VIRTUAL_ENV", sys.prefix)}
    path = [p for p in os.environ["PATH"].split(os.pathsep) if not p.startswith(tuple(outer))]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENTKIT_", "PYTHON", "PIP_", "PYTEST_", "VIRTUAL_ENV"))
    }
    env.update(
        PATH=os.pathsep.join(path),
        PIP_FIND_LINKS=str(wheelhouse.path),  # what the reader exports before step 1
        PIP_NO_INDEX="1",
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    script = tmp_path / "tutorial.sh"
    script.write_text(tutorial_script(DOC.read_text(encoding="utf-8")))
    proc = subprocess.run(
        ["bash", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    out = proc.stdout
    assert re.search(r"keep-task +0\.1\.0 +loaded +compactors:keep-task", out), out
    assert "ok: 1 plugins loaded" in out
    passed = [int(n) for n in re.findall(r"=+ (\d+) passed in [\d.]+s", out)]
    assert len(passed) == 2 and passed[1] == passed[0] + 1, out  # then with the new test
    assert out.count("TestModel answer after 0 tool result(s)") == 2, out
    plugin = tmp_path / "my-agent" / "agentkit-compactor-keep-task"
    assert (plugin / "tests" / "test_keep_task.py").is_file()
