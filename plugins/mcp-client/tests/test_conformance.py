"""The bridge driven through MCP's official client conformance suite (npm, on Node 22)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from mcp_client_helpers import SERVERS

SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client_conformance_scenario(peers, scenario, tmp_path):
    client = f"{sys.executable} {SERVERS / 'conformance_client.py'}"
    command = [peers.node22, peers.conformance_js, "client", "--command", client]
    out = subprocess.run(
        [*command, "--scenario", scenario, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    report = out.stdout + out.stderr
    assert out.returncode == 0, report
    assert "OVERALL: PASSED" in report, report
    assert re.search(r"Passed: (\d+)/\1, 0 failed", report), report
