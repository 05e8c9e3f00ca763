"""Fixtures: the MCP Inspector from .ci/setup.d/30-mcp.sh, and commands serving sample tools."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # for mcp_server_helpers
ROOT = HERE.parents[2]
MODULES = ROOT / ".ci" / "cache" / "mcp" / "node_modules"


@pytest.fixture(scope="session")
def inspector() -> list[str]:
    """The Inspector's CLI mode, run with the repo-local Node 22 binary (no npx)."""
    node, cli = MODULES / ".bin" / "node", MODULES / ".bin" / "mcp-inspector"
    if not (node.exists() and cli.exists()):
        pytest.fail(f"the MCP Inspector is not in {MODULES}; install the peers: bash .ci/setup")
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
    """A served HTTP endpoint on a free port; yields the URL the server prints, then stops it."""
    proc = subprocess.Popen(
        [*serve_cmd, "--http", "--port", "0"],
        cwd=HERE,
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else ""  # it says where, once it listens
        match = re.fullmatch(r"agentkit mcp serve: listening on (http://\S+/mcp) \(.*\)\n", line)
        assert match, f"agentkit mcp serve --http printed {line!r}, exit code {proc.poll()}"
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


@pytest.fixture(autouse=True)
def _in_tests_dir(monkeypatch):
    monkeypatch.chdir(HERE)
    os.environ.setdefault("NO_COLOR", "1")
