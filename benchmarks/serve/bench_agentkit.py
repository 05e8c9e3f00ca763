"""agentkit's side: the same one-turn chat run in process, over AG-UI and over A2A.

One process, one event loop: uvicorn serves each plugin's ASGI app on a real local socket
(127.0.0.1, port 0) and the clients (httpx for AG-UI, the a2a-sdk client for A2A) talk to it
over TCP. Each request is a new conversation (a new thread / context, so a new session in
``memory://``), as a client opening a chat would send. The rows, interleaved request by request:

- ``inproc``: ``Agent.run_stream_events`` on the kit's agent, no session;
- ``inproc_session``: the same with the conversation's recorder, as the AG-UI endpoint runs it
  (``kit.recorder_for(thread)``, its working context): what a served run does before HTTP;
- ``floor``: the HTTP floor (``common.floor_app``): the same events canned, no agent;
- ``agui``: POST /agent, the SSE stream read to ``RUN_FINISHED``;
- ``a2a_raw``: ``message/stream`` as JSON-RPC over httpx (A2A 0.3's names), read to the final
  status as the AG-UI stream is read: the server's cost, beside the same client's;
- ``a2a_floor``: ``a2a_raw`` on the same server with no agent (``a2a_floor.StandIn`` sends the
  same events): the SDK's floor, the session store's task saves included;
- ``a2a_floor_sdk_store``: the same with the SDK's ``InMemoryTaskStore``: what the saves cost;
- ``a2a_stream``: ``message/stream`` (the a2a-sdk client, streaming), to the stream's end;
- ``a2a_send``: ``message/send`` (not streaming): its first figure is its end.

Prints one JSON line: per row the median µs to the first text delta and to the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from functools import partial
from typing import Any

import httpx
from a2a_floor import floor_app as a2a_floor_app
from agentkit_serve_a2a import a2a_app
from agentkit_serve_agui import agui_app
from common import ANSWER
from common import Timed
from common import a2a_stream_body
from common import agui_request
from common import first_text
from common import floor_app
from common import in_process
from common import measure
from common import serving
from common import stop

from agentkit_core import Agent
from agentkit_core import Kit
from agentkit_core.events import TextDelta
from agentkit_core.testing import ScriptedModel


def say(text: str) -> Any:
    from a2a.types import Message as A2AMessage
    from a2a.types import Part
    from a2a.types import Role
    from a2a.types import SendMessageRequest

    message = A2AMessage(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        context_id=uuid.uuid4().hex,
    )
    return SendMessageRequest(message=message)


async def a2a_request(client: object, streaming: bool) -> Timed:
    """One message on a new context, read to the stream's end (the task's last state)."""
    start = time.perf_counter()
    first, text = 0.0, ""
    async for response in client.send_message(say("go")):  # type: ignore[attr-defined]
        if response.HasField("artifact_update"):
            first = first or first_text()
            text += "".join(p.text for p in response.artifact_update.artifact.parts)
        elif response.HasField("task") and not streaming:
            first = first_text()
            for artifact in response.task.artifacts:
                text += "".join(p.text for p in artifact.parts)
    end = time.perf_counter()
    assert text == ANSWER and first, text
    return (first - start) * 1e6, (end - start) * 1e6


async def a2a_raw(http: httpx.AsyncClient, url: str, expect: str | None = ANSWER) -> Timed:
    """``message/stream`` as JSON-RPC over httpx, read as the AG-UI stream is: server cost only."""
    body = a2a_stream_body()
    start = time.perf_counter()
    first, text, done = 0.0, "", False
    async with http.stream("POST", url, json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            result = json.loads(line[5:])["result"]
            if result["kind"] == "artifact-update":
                first = first or first_text()
                text += "".join(p["text"] for p in result["artifact"]["parts"])
            elif result["kind"] == "status-update" and result["final"]:
                done = result["status"]["state"] == "completed"
    end = time.perf_counter()
    assert text == (expect or text) and first and done, text
    return (first - start) * 1e6, (end - start) * 1e6


async def main(requests: int, warmup: int, rows: list[str]) -> None:
    # the client's SDK is imported after the server's app, as `agentkit serve` imports the
    # plugin first: the plugin sets the SDK's tracing switch before the SDK's first import
    from a2a.client import ClientConfig
    from a2a.client import create_client

    total = (requests + warmup) * 6 + 10
    kit = await Kit.open(model=ScriptedModel([ANSWER] * total), session="memory://")
    agent = Agent.from_config(kit.config())
    http = httpx.AsyncClient(timeout=30)
    floor_url, floor_task, floor_server = await serving(lambda url: floor_app())
    agui_url, agui_task, agui_server = await serving(lambda url: agui_app(kit))
    a2a_url, a2a_task, a2a_server = await serving(lambda url: a2a_app(kit, url))
    floor_a2a = [
        await serving(partial(a2a_floor_app, kit, sdk_store=sdk_store)) for sdk_store in (0, 1)
    ]
    sdk_http = httpx.AsyncClient(timeout=30)  # the SDK sets headers of its own on its client
    streaming = await create_client(a2a_url, ClientConfig(httpx_client=sdk_http, streaming=True))
    sending = await create_client(a2a_url, ClientConfig(httpx_client=sdk_http, streaming=False))

    def is_delta(event: object) -> bool:
        return isinstance(event, TextDelta)

    async def inproc() -> Timed:
        return await in_process(agent.run_stream_events("go"), is_delta)

    async def inproc_session() -> Timed:
        start = time.perf_counter()
        recorder = await kit.recorder_for(uuid.uuid4().hex)
        ctx = agent.new_context()
        ctx.recorder = recorder
        wc = recorder.working_context(agent.model.name)
        return await in_process(agent.run_stream_events("go", ctx=ctx, wc=wc), is_delta, start)

    runners = {
        "inproc": inproc,
        "inproc_session": inproc_session,
        "floor": lambda: agui_request(http, f"{floor_url}/agent"),
        "agui": lambda: agui_request(http, f"{agui_url}/agent"),
        "a2a_raw": lambda: a2a_raw(http, f"{a2a_url}/"),
        "a2a_floor": lambda: a2a_raw(http, f"{floor_a2a[0][0]}/"),
        "a2a_floor_sdk_store": lambda: a2a_raw(http, f"{floor_a2a[1][0]}/"),
        "a2a_stream": lambda: a2a_request(streaming, True),
        "a2a_send": lambda: a2a_request(sending, False),
    }
    if rows:
        runners = {name: runners[name] for name in rows}
    try:
        figures = await measure(runners, requests, warmup)
    finally:
        for client in (streaming, sending):
            await client.close()
        await http.aclose()
        await sdk_http.aclose()
        await stop(floor_task, floor_server)
        await stop(agui_task, agui_server)
        await stop(a2a_task, a2a_server)
        for _, task, server in floor_a2a:
            await stop(task, server)
        await kit.aclose()
    print(json.dumps(figures))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rows", nargs="*", default=[], help="these rows only (default: all)")
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.warmup, args.rows))
