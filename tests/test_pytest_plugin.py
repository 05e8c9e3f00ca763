"""agentkit-core's pytest plugin: auto mode when a project chose no asyncio mode, else theirs.

Each case runs pytest in a fresh process, in a directory outside this repository, so only the
configuration written there applies (and the plugin, found through its entry point).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TEST = """
import asyncio

import pytest


@pytest.fixture
async def ready():
    await asyncio.sleep(0)
    return True


async def test_unmarked(ready):
    assert ready is True
"""

#: Where a project can choose strict mode: the file (and its text) or the command line.
STRICT = {
    "pytest.ini": ("pytest.ini", "[pytest]\nasyncio_mode = strict\n", []),
    "setup.cfg": ("setup.cfg", "[tool:pytest]\nasyncio_mode = strict\n", []),
    "pyproject": (
        "pyproject.toml",
        '[tool.pytest.ini_options]\nasyncio_mode = "strict"\n',
        [],
    ),
    "-o": ("pytest.ini", "[pytest]\n", ["-o", "asyncio_mode=strict"]),
    "--asyncio-mode": ("pytest.ini", "[pytest]\n", ["--asyncio-mode=strict"]),
}


def run_pytest(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest on one unmarked async test using an async fixture, in ``directory``."""
    (directory / "test_it.py").write_text(TEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=directory,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_project_that_chose_no_mode_runs_async_tests_and_fixtures(tmp_path: Path) -> None:
    proc = run_pytest(tmp_path, "-W", "error")  # and no warning that the loop scope is unset
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_a_project_that_chose_no_mode_but_a_loop_scope_runs_in_auto(tmp_path: Path) -> None:
    scope = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
    (tmp_path / "pytest.ini").write_text(scope)
    proc = run_pytest(tmp_path, "-W", "error")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("where", sorted(STRICT))
def test_a_project_that_chose_strict_mode_keeps_it(where: str, tmp_path: Path) -> None:
    name, text, args = STRICT[where]
    (tmp_path / name).write_text(text)
    proc = run_pytest(tmp_path, *args)
    assert proc.returncode != 0, proc.stdout
    assert "not natively support" in proc.stdout, proc.stdout  # strict: unmarked, not run
