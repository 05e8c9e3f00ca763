"""A writer process the process conformance suites start: ``python -m MODULE ARGS...``.

Each writer opens its store, prints ``ready`` and waits for a line on its stdin, so the test
starts them all before any writes; a writer that never gets ready fails the test with its error.
"""

from __future__ import annotations

import subprocess
import sys


def start_writer(module: str, *args: str, name: str) -> subprocess.Popen[str]:
    """Start writer ``module`` with ``args`` and wait until it says ``ready``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line != "ready\n":
        proc.kill()
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"{name} did not start: {line!r} {err}")
    return proc
