"""Processes for the tests: workers (``runs_app.py``) to start, wait on and SIGKILL; the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

APP = Path(__file__).with_name("runs_app.py")


def start(
    database: str,
    logs: Path,
    worker_id: str = "local",
    *extra: str,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """A worker process serving the test agent on the queue ``runs``."""
    with open(logs / f"worker-{worker_id}.err", "ab") as err:  # the child keeps its copy
        return subprocess.Popen(
            [sys.executable, str(APP), database, str(logs), worker_id, *extra],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, **(env or {})},
        )


def wait_for_line(
    path: Path, line: str, proc: subprocess.Popen[bytes], timeout: float = 60
) -> None:
    """Wait until ``path`` holds ``line`` (the worker reached that point)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and line in path.read_text(encoding="utf-8").splitlines():
            return
        if proc.poll() is not None:
            raise AssertionError(f"the worker exited ({proc.returncode}) before {line!r}")
        time.sleep(0.01)
    raise AssertionError(f"{path} never held {line!r}")


def agentkit(
    cwd: Path, *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``agentkit ARGV...`` as a process of its own, in ``cwd`` (``env`` on top of ours)."""
    return subprocess.run(
        [sys.executable, "-m", "agentkit_core", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL: no cleanup, no flush, as in a crash."""
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        kill(proc)
