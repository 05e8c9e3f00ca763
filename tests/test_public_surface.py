"""The public surface: every exported name resolves, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import agentkit_core
import agentkit_core.testing

#: Optional libraries some plugin needs; neither core nor any plugin's entry module may pull
#: them in at import or load time (they cost start-up of ``agentkit plugins list``).
HEAVY = (
    "httpx",
    "psycopg",
    "psycopg_pool",
    "mcp",
    "hypothesis",
    "jsonschema",
    "sqlite3",
    "opentelemetry",
)


@pytest.mark.parametrize("module", [agentkit_core, agentkit_core.testing])
def test_every_exported_name_resolves_once(module: object) -> None:
    names = list(module.__all__)  # type: ignore[attr-defined]
    missing = [n for n in names if getattr(module, n, None) is None]
    assert missing == []
    assert len(set(names)) == len(names)


def test_importing_core_and_loading_every_plugin_imports_no_optional_library() -> None:
    code = f"""
import sys
import agentkit_core
pm = agentkit_core.get_plugin_manager()
assert len(pm.plugins()) >= 10, pm.plugins()
print(sorted(m for m in {HEAVY!r} if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
