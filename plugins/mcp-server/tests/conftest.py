"""Fixtures: the MCP Inspector from .ci/setup.d/30-mcp.sh, and commands serving sample tools."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MODULES = ROOT / ".ci" / "cache" / "mcp" / "node_modules"


@pytest.fixture(scope="session")
def inspector() -> list[str]:
    """The Inspector's CLI mode, run with the repo-local Node 22 binary (no npx)."""
    node, cli = MODULES / ".bin" / "node", MODULES / ".bin" / "mcp-inspector"
    if not (node.exists() and cli.exists()):
        subprocess.run(["bash", str(ROOT / ".ci" / "setup.d" / "30-mcp.sh")], check=True)
    return [str(node), str(cli.resolve()), "--cli"]


@pytest.fixture(scope="session")
def inspect(inspector):
    """Run the Inspector's CLI against ``target`` (a server command or a URL); its JSON."""

    def run(target, *args):
        out = subprocess.run(
            [*inspector, *target, *args], capture_output=True, text=True, timeout=90, check=False
        )
        assert out.returncode == 0, out.stdout + out.stderr
        return json.loads(out.stdout)

    return run


@pytest.fixture(scope="session")
def serve_command():
    """``agentkit mcp serve --tools REF``, a reference found from this directory."""
    return lambda ref: [sys.executable, "-m", "agentkit_core", "mcp", "serve", "--tools", ref]


@pytest.fixture
def serve_cmd(serve_command) -> list[str]:
    """``agentkit mcp serve`` over this directory's sample tools."""
    return serve_command("sample_tools:TOOLS")


@pytest.fixture
def http_server(serve_cmd):
    """A served HTTP endpoint on 127.0.0.1; yields its URL and stops the server after."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [*serve_cmd, "--http", "--port", str(port)], cwd=HERE, start_new_session=True
    )
    deadline = time.monotonic() + 30
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError(f"agentkit mcp serve --http did not listen on {port}")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(autouse=True)
def _in_tests_dir(monkeypatch):
    monkeypatch.chdir(HERE)
    os.environ.setdefault("NO_COLOR", "1")
