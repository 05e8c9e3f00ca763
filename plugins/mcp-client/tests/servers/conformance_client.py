"""The client under test for MCP's conformance suite: our bridge, driven by the scenario.

The suite appends the server URL to the command line and names the scenario in
``MCP_CONFORMANCE_SCENARIO``.
"""

import asyncio
import json
import os
import sys
import tempfile

import httpx
from agentkit_mcp_client import MCPToolSource

ARGUMENTS = {"add_numbers": {"a": 2, "b": 3}}


async def accept_defaults(question, schema, secret):
    """Answer a form with each field's declared default."""
    props = (schema or {}).get("properties", {})
    return {name: spec["default"] for name, spec in props.items() if "default" in spec}


async def browser(url: str) -> None:
    """Follow the authorization URL's redirects, as a browser would, back to the listener."""
    async with httpx.AsyncClient(follow_redirects=True) as client:
        await client.get(url)


def authenticated(url: str, store: str) -> dict:
    """An ``auth="oauth"`` server whose login follows the redirects at once.

    A pre-registered client comes from the suite's context; the client metadata URL is the
    one the CIMD scenario expects, used only where the server supports it.
    """
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return {
        "url": url,
        "auth": "oauth",
        "token_store": store,
        "authorize": lambda u: asyncio.get_running_loop().create_task(browser(u)),
        "client_id": context.get("client_id"),
        "client_secret": context.get("client_secret"),
        "client_metadata_url": "https://conformance-test.local/client-metadata.json",
    }


async def main(url: str, scenario: str) -> None:
    server: object = url
    if scenario.startswith("auth/"):
        server = authenticated(url, f"file://{tempfile.mkdtemp()}")
    async with MCPToolSource([server], elicitor=accept_defaults, stderr=sys.stderr) as source:
        for tool in await source.list_tools():
            result = await tool.invoke(ARGUMENTS.get(tool.name, {}), None)
            print(f"{tool.name}: {result.content}")
    print(f"{scenario}: done")


asyncio.run(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))
