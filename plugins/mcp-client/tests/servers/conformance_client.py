"""The client under test for MCP's conformance suite: our bridge, driven by the scenario.

The suite appends the server URL to the command line and names the scenario in
``MCP_CONFORMANCE_SCENARIO``.
"""

import asyncio
import os
import sys

from agentkit_mcp_client import MCPToolSource

ARGUMENTS = {"add_numbers": {"a": 2, "b": 3}}


async def accept_defaults(question, schema, secret):
    """Answer a form with each field's declared default."""
    props = (schema or {}).get("properties", {})
    return {name: spec["default"] for name, spec in props.items() if "default" in spec}


async def main(url: str, scenario: str) -> None:
    async with MCPToolSource([url], elicitor=accept_defaults, stderr=sys.stderr) as source:
        for tool in await source.list_tools():
            result = await tool.invoke(ARGUMENTS.get(tool.name, {}), None)
            print(f"{tool.name}: {result.content}")
    print(f"{scenario}: done")


asyncio.run(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))
