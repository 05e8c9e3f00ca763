"""Fixtures: the real MCP peers from .ci/setup.d/30-mcp.sh, and a check that no child is left."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for mcp_client_helpers

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".ci" / "cache" / "mcp"
MODULES = CACHE / "node_modules"
SERVERS = Path(__file__).resolve().parent / "servers"


@dataclass(frozen=True)
class Peers:
    """Command lines of the real servers, run with the node binary directly (no npx)."""

    node: str
    node22: str
    everything_js: str
    filesystem_js: str
    inspector_cli_js: str
    conformance_js: str
    time_server: str

    def everything(self) -> str:
        return f"{self.node} {self.everything_js} stdio"

    def filesystem(self, directory: str) -> str:
        return f"{self.node} {self.filesystem_js} {directory}"


def _script(bin_name: str) -> str:
    link = MODULES / ".bin" / bin_name
    return str(link.resolve())


@pytest.fixture(scope="session")
def peers() -> Peers:
    needed = [MODULES / ".bin" / b for b in ("mcp-server-everything", "conformance", "node")]
    needed.append(CACHE / "time-venv" / "bin" / "mcp-server-time")
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        pytest.fail(f"MCP peers missing ({', '.join(missing)}); install them: bash .ci/setup")
    node22 = str(MODULES / ".bin" / "node")
    return Peers(
        node=node22,
        node22=node22,
        everything_js=_script("mcp-server-everything"),
        filesystem_js=_script("mcp-server-filesystem"),
        inspector_cli_js=_script("mcp-inspector-cli"),
        conformance_js=_script("conformance"),
        time_server=str(CACHE / "time-venv" / "bin" / "mcp-server-time"),
    )


def live_children() -> list[psutil.Process]:
    return [p for p in psutil.Process(os.getpid()).children(recursive=True) if p.is_running()]


@pytest.fixture(autouse=True)
def no_children_left():
    """Every test must leave no child process of ours running (the issue's guarantee)."""
    before = {p.pid for p in live_children()}
    yield
    deadline = time.monotonic() + 5
    left = [p for p in live_children() if p.pid not in before]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in live_children() if p.pid not in before and p.status() != "zombie"]
    assert not left, f"child processes left behind: {[p.cmdline() for p in left]}"
