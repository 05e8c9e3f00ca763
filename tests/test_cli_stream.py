"""``agentkit run`` streaming: the answer's text as it arrives, ``--events`` as JSON lines."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.chat_models import CHAT_PLUGIN
from tests.chat_models import SLOW_WORDS
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("--tools", "tests.view_runs:CLI_TOOLS")


@pytest.fixture
def chat_site(make_site: Any) -> Path:
    """A site holding one plugin that offers tests.chat_models' model as ``chat:NAME``."""
    site = make_site("chat")
    site.add("agentkit-test-chat", {"chat": "akt_chat"}, {"akt_chat": CHAT_PLUGIN})
    return Path(site.path)


def test_events_are_json_lines_numbered_in_order_ending_with_the_finish() -> None:
    proc = run_cli("run", "look up ann", *TOOLS, "--model", "test", "--events", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    seqs = [event["seq"] for event in events]
    assert seqs == sorted(set(seqs)) and len(seqs) > 5
    assert events[0]["kind"] == "run_started" and events[-1]["kind"] == "run_finished"
    assert events[-1]["result"]["output"].startswith("TestModel answer after 2 tool result(s)")
    kinds = [event["kind"] for event in events]
    assert kinds.count("tool_started") == kinds.count("tool_finished") == 2
    assert len({event["run_id"] for event in events}) == 1
    # the step lines stay on stderr
    assert any(line.startswith("agentkit: [1]   tool lookup") for line in proc.stderr.splitlines())


def test_events_and_json_together_are_refused() -> None:
    proc = run_cli("run", "hi", "--model", "test", "--events", "--json", cwd=ROOT)
    assert proc.returncode == 2
    assert "--events and --json both print on stdout" in proc.stderr


def test_the_answer_streams_to_stdout_before_the_run_ends(chat_site: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(chat_site), str(ROOT)])
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentkit_core", "run", "slow", "--model", "chat:slow"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "no text within 30 s"
        first = os.read(proc.stdout.fileno(), 1024).decode()
        running = proc.poll() is None
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert running, "the process had ended before its first text was read"
    assert first and first != "".join(SLOW_WORDS) + "\n"
    # the whole answer once, as without streaming: the text, then one newline
    assert first + rest.decode() == "".join(SLOW_WORDS) + "\n", err.decode()
    assert proc.returncode == 0


def test_quiet_prints_the_answer_whole_at_the_end(chat_site: Path) -> None:
    started = time.monotonic()
    proc = run_cli(
        "run", "slow", "--model", "chat:slow", "-q", pythonpath=[chat_site, ROOT], cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "".join(SLOW_WORDS) + "\n" and proc.stderr == ""
    assert time.monotonic() - started > 1.6  # the pauses between the words


def test_a_retry_is_a_line_on_stderr(chat_site: Path) -> None:
    proc = run_cli("run", "flaky", "--model", "chat:f", pythonpath=[chat_site, ROOT], cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "echo 1: flaky\n"
    retries = [line for line in proc.stderr.splitlines() if line.startswith("agentkit: retry")]
    assert len(retries) == 1 and "after: scripted: overloaded, try again" in retries[0], retries
