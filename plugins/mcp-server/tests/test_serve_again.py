"""A server started after another one of the process caught Ctrl-C answers as the first did.

sse-starlette (under the mcp SDK's HTTP transport) keeps one process-wide "shutting down" flag,
set when a uvicorn server catches Ctrl-C or SIGTERM and never cleared: every SSE stream of a
server started later in the process ended at once, so each request failed with "SSE stream
ended without a response". The check runs in a process of its own: it signals itself.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, os, signal

    import mcp
    from agentkit_core import tool
    from agentkit_mcp_server import serve_tools


    @tool
    def hello(name: str) -> str:
        \"\"\"Greets.\"\"\"
        return "hi " + name


    async def serve_and_call(interrupt):
        where, ready = [], asyncio.Event()
        serving = asyncio.ensure_future(
            serve_tools([hello], transport="http", port=0,
                        on_listening=lambda url: (where.append(url), ready.set()))
        )
        await ready.wait()
        async with mcp.Client(where[0], mode="legacy") as client:
            result = await client.call_tool("hello", {"name": "again"})
        print(result.content[0].text, flush=True)
        if interrupt:  # Ctrl-C, caught by the server's signal handler
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0.5)
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)


    try:
        asyncio.run(serve_and_call(True))
    except KeyboardInterrupt:  # uvicorn raises the signal it caught again once it stopped
        pass
    asyncio.run(serve_and_call(False))
    """
)


def test_a_server_started_after_a_ctrl_c_still_streams_its_answers() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ["hi", "again", "hi", "again"], done.stderr[-2000:]
