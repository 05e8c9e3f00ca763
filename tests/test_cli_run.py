"""`agentkit run` in a subprocess, on the built-in TestModel and the example tools."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def agentkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentkit_core", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_run_without_a_model_says_so_and_uses_the_tools() -> None:
    proc = agentkit("run", "What is 6 * 7?", "--tools", "examples.tools:TOOLS")
    assert proc.returncode == 0, proc.stderr
    assert "demo run on the built-in TestModel" in proc.stderr
    assert proc.stdout.startswith("TestModel answer after 4 tool result(s)")
    assert "calculate" in proc.stdout


def test_run_with_typed_output_prints_json() -> None:
    proc = agentkit("run", "plan", "--output", "tests.cli_types:Plan")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"subject", "steps"}


def test_bad_tool_spec_is_a_clear_error() -> None:
    proc = agentkit("run", "x", "--tools", "examples.tools:NOPE")
    assert proc.returncode == 2
    assert "'examples.tools' has no 'NOPE'" in proc.stderr
