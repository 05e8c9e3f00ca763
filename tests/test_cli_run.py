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


def test_a_setting_out_of_range_is_one_line() -> None:
    proc = agentkit("run", "x", "--model", "test", "--max-tokens", "0")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "agentkit: error: max_tokens in agentkit run's --temperature/--max-tokens must be an "
        "integer from 1, got 0 (int)"
    ]
    assert proc.stdout == ""


def test_run_with_a_session_records_it_and_resume_continues_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/sessions.db"
    first = agentkit("run", "hello", "--model", "test", "--session", url)
    assert first.returncode == 0, first.stderr
    [line] = [ln for ln in first.stderr.splitlines() if ln.startswith("agentkit: session ")]
    session = line.split()[-1]
    second = agentkit("run", "again", "--model", "test", "--session", url, "--resume", session)
    assert second.returncode == 0, second.stderr
    assert "agentkit: session" not in second.stderr  # a new session's id only
    export = agentkit("sessions", "export", session, "--store", url)
    assert export.returncode == 0, export.stderr
    items = [json.loads(ln) for ln in export.stdout.splitlines()]
    assert [i["kind"] for i in items] == ["header", "user", "response", "user", "response"]
    assert items[0]["body"]["model"] == "test"
    assert [i["body"]["message"]["content"] for i in items if i["kind"] == "user"] == [
        "hello",
        "again",
    ]


def test_run_resume_errors_name_what_is_missing(tmp_path: Path) -> None:
    alone = agentkit("run", "x", "--model", "test", "--resume", "abc")
    assert alone.returncode == 2
    assert "--resume needs --store URL" in alone.stderr and "or --session URL" in alone.stderr
    url = f"sqlite:///{tmp_path}/sessions.db"
    missing = agentkit("run", "x", "--model", "test", "--session", url, "--resume", "abc")
    assert missing.returncode == 2
    assert f"no session 'abc' in {url}" in missing.stderr
