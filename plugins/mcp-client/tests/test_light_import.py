"""The MCP plugins load without the SDK: discovery and ``agentkit --help`` stay fast."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("mcp", "mcp_types", "httpx", "anyio", "uvicorn", "starlette")

PROBE = f"""
import json, sys
import agentkit_core
from agentkit_core.cli import build_parser

pm = agentkit_core.get_plugin_manager()
pm.lookup("tool_sources", "mcp")
build_parser(pm).parse_args(["mcp", "serve", "--tools", "m:a"])
loaded = {{name.partition(".")[0] for name in sys.modules}}
print(json.dumps({{
    "plugins": sorted(n for n in loaded if n.startswith("agentkit_mcp")),
    "heavy": sorted(loaded & set({HEAVY!r})),
}}))
"""


def test_discovery_and_the_cli_parser_import_no_mcp_sdk():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(out.stdout)
    assert seen["plugins"] == ["agentkit_mcp_client", "agentkit_mcp_server"]
    assert seen["heavy"] == []
