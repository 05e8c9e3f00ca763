"""The official AG-UI client (``@ag-ui/client`` from npm, run by Node) against
``agentkit serve --protocol agui``: a run with a tool call, then a text run on the same thread.

The client is installed by ``.ci/setup.d/35-agui-client.sh`` into ``.ci/cache/agui``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
MODULES = HERE.parents[2] / ".ci" / "cache" / "agui" / "node_modules"
CLIENT = HERE / "agui_client.cjs"
TOOLS = '''
from agentkit_core import tool


@tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()
'''


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``agentkit serve --protocol agui`` with the test model and one tool; its endpoint."""
    node = shutil.which("node")
    if node is None or not (MODULES / "@ag-ui" / "client" / "package.json").exists():
        pytest.fail("Node or @ag-ui/client missing; install them: bash .ci/setup")
    (tmp_path / "shout_tools.py").write_text(TOOLS)
    argv = [sys.executable, "-m", "agentkit_core", "serve", "--protocol", "agui", "--port", "0"]
    argv += ["--model", "test", "--tools", "shout_tools:shout"]
    with subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=tmp_path) as proc:
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert line.startswith("agentkit: serving agui on http://127.0.0.1:"), line
            yield line.split(" on ", 1)[1].strip() + "/agent"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def run(url: str, thread: str, run_id: str, text: str) -> dict[str, Any]:
    """One run through ``HttpAgent.runAgent``: what the client saw."""
    env = {**os.environ, "NODE_PATH": str(MODULES)}
    out = subprocess.run(
        ["node", str(CLIENT), url, thread, run_id, text],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    seen: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return seen


def test_the_official_client_runs_a_tool_call_and_a_text_turn(served: str) -> None:
    first = run(served, "t1", "r1", "shout x")
    assert first["types"][0] == "RUN_STARTED" and first["types"][-1] == "RUN_FINISHED"
    assert first["calls"] == {"shout": {"args": {"text": "x"}, "result": "X"}}
    assert first["said"] == "TestModel answer after 1 tool result(s) (shout)"
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert first["messages"][1]["toolCalls"][0]["function"]["name"] == "shout"

    second = run(served, "t1", "r2", "and now?")  # the thread continues in its session
    assert "TOOL_CALL_START" not in second["types"]
    assert second["types"][-1] == "RUN_FINISHED" and second["said"]
    assert second["messages"][-1] == {
        "id": second["messages"][-1]["id"],
        "role": "assistant",
        "content": second["said"],
    }
