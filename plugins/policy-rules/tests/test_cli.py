"""``agentkit policy explain`` in a subprocess, as a person runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

POLICY = """\
[[rules]]
id = "read-only-git"
verdict = "allow"
tool = "bash"
match = { command = { prefix = ["git status"] } }

[[rules]]
id = "no-push"
verdict = "deny"
tool = "bash"
match = { command = { prefix = ["git push"] } }
reason = "people push"

[[rules]]
id = "no-mcp"
verdict = "deny"
tool = "mcp_*"
"""


def explain(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "policy.toml").write_text(POLICY)
    return subprocess.run(
        [sys.executable, "-m", "agentkit_core", "policy", "explain", "policy.toml", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--tool", "bash", "--args", '{"command": "git push origin"}'], "deny no-push"),
        (["--tool", "bash", "--args", '{"command": "git status"}'], "allow read-only-git"),
        (["--tool", "bash", "--args", '{"command": "make"}'], "ask default"),
        (["--tool", "write_file"], "ask default"),
    ],
)
def test_explain_prints_the_verdict_and_the_rule(
    tmp_path: Path, args: list[str], line: str
) -> None:
    done = explain(tmp_path, *args)
    assert (done.returncode, done.stdout, done.stderr) == (0, line + "\n", "")


def test_explain_json_and_warnings(tmp_path: Path) -> None:
    done = explain(
        tmp_path,
        "--tool",
        "bash",
        "--args",
        '{"command": "git push"}',
        "--json",
        "--offered",
        "bash,read_file",
    )
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "verdict": "deny",
        "rule": "no-push",
        "reason": "rule 'no-push' denies 'bash' (`git push`): people push",
    }
    assert done.stderr.splitlines() == [
        "agentkit: warning: rule 'no-mcp' (policy.toml line 14): tool glob 'mcp_*' matches no "
        "offered tool"
    ]


def test_explain_reports_bad_input_with_exit_2(tmp_path: Path) -> None:
    done = explain(tmp_path, "--tool", "bash", "--args", "{not json")
    assert done.returncode == 2 and "--args is not JSON" in done.stderr
    done = explain(tmp_path, "--tool", "bash", "--args", "[1]")
    assert done.returncode == 2 and "must be a JSON object" in done.stderr
    (tmp_path / "bad.toml").write_text('[[rules]]\nverdict = "alow"\ntool = "x"\n')
    done = subprocess.run(
        [sys.executable, "-m", "agentkit_core", "policy", "explain", "bad.toml", "--tool", "x"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "agentkit: error: bad.toml:2: unknown verdict 'alow' (did you mean 'allow'?); the "
        "verdicts are allow, ask, deny\n"
    )


def test_explain_reads_arguments_that_name_a_key_twice_as_a_run_does(tmp_path: Path) -> None:
    # json.loads keeps the last value ("git status", allowed); a run denies the call, since
    # the rules could read one value while the tool gets the other, and explain says so.
    args = '{"command": "git push", "command": "git status"}'
    done = explain(tmp_path, "--tool", "bash", "--args", args, "--json")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout) == {
        "verdict": "deny",
        "rule": "unreadable-arguments",
        "reason": "the arguments of 'bash' cannot be read (duplicate key 'command' at position "
        "24): no rule can tell what the call would do",
    }
