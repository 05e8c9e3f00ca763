"""The kit over a real MCP server: connected at construction, labelled per server, closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit_core import Kit
from agentkit_core import ToolSourceError
from agentkit_core import tool
from agentkit_core.plugin import ToolConflictError

ROOT = Path(__file__).resolve().parent.parent
TIME_SERVER = ROOT / ".ci" / "cache" / "mcp" / "time-venv" / "bin" / "mcp-server-time"


@pytest.fixture(scope="module")
def time_server() -> str:
    if not TIME_SERVER.exists():
        pytest.fail(f"mcp-server-time is not at {TIME_SERVER}; install the peers: bash .ci/setup")
    return f"{TIME_SERVER} --local-timezone UTC"


async def test_mcp_tools_join_the_union_under_the_servers_label(time_server: str) -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    async with await Kit.open(model="test", tools=[lookup], mcp=[time_server]) as kit:
        origins = kit.tools()
        assert origins[0].name == "lookup" and origins[0].source == "tools"
        mcp = {o.name: o.source for o in origins[1:]}
        assert mcp and set(mcp.values()) == {"mcp:#1 mcp-server-time"}
        assert "get_current_time" in mcp
        tools = {t.name: t for t in await kit.config().tools.tools()}
        assert "get_current_time" in tools


async def test_a_clash_with_an_mcp_tool_at_construction_names_both(time_server: str) -> None:
    @tool
    def get_current_time() -> str:
        """A local tool that clashes with the server's."""
        return "now"

    with pytest.raises(ToolConflictError, match="by tools and by mcp:#1 mcp-server-time"):
        await Kit.open(model="test", tools=[get_current_time], mcp=[time_server])


async def test_a_server_that_fails_to_start_fails_construction(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text("import sys\nprint('missing config file', file=sys.stderr)\nsys.exit(3)\n")
    with pytest.raises(ToolSourceError, match="missing config file"):
        await Kit.open(model="test", mcp=[f"python3 {script}"])
