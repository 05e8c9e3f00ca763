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


def pause(proc: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """SIGSTOP ``proc`` and wait until it is stopped.

    A signal is delivered after ``send_signal`` returns: a worker that looks paused may still
    run for a moment (and open a transaction). Linux's ``/proc`` tells when it has stopped.
    """
    proc.send_signal(signal.SIGSTOP)
    stat = Path(f"/proc/{proc.pid}/stat")
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        # the state is the field after the command's name, which is in parentheses
        if stat.read_text(encoding="ascii").rsplit(")", 1)[1].split()[0] in ("T", "t"):
            return
        time.sleep(0.001)
    raise AssertionError(f"worker {proc.pid} did not stop within {timeout} s of SIGSTOP")


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL: no cleanup, no flush, as in a crash."""
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        kill(proc)
