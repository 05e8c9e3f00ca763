"""pydantic-ai's side: the same one-turn chat in process and through its AG-UI adapter.

Run in pydantic-ai's venv (``setup.sh``). The model is a ``FunctionModel`` streaming the same
answer in the same 8-character deltas as agentkit's ``ScriptedModel``; the AG-UI endpoint is the
documented one, a Starlette route handing each request to ``AGUIAdapter.dispatch_request``,
served by uvicorn on a real local socket and read by the same httpx client (``common.py``).
pydantic-ai's adapter keeps no session: the client sends the conversation, and here sends only
its one message, so a request is a new conversation on both sides. Rows, interleaved request by
request: ``inproc`` (``Agent.run_stream_events``), ``floor`` (the HTTP floor, the same
canned events with no agent behind them, as on agentkit's side) and ``agui``. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from common import Timed
from common import agui_request
from common import chunks
from common import floor_app
from common import in_process
from common import measure
from common import serving
from common import stop
from pydantic_ai import Agent
from pydantic_ai.messages import PartDeltaEvent
from pydantic_ai.messages import PartStartEvent
from pydantic_ai.messages import TextPart
from pydantic_ai.messages import TextPartDelta
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


async def answer(messages: list[Any], info: AgentInfo) -> AsyncIterator[str]:
    for chunk in chunks():
        yield chunk


def is_delta(event: object) -> bool:
    if isinstance(event, PartStartEvent):
        return isinstance(event.part, TextPart) and bool(event.part.content)
    return isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta)


async def main(requests: int, warmup: int) -> None:
    agent = Agent(FunctionModel(stream_function=answer))

    async def endpoint(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    app = Starlette(routes=[Route("/agent", endpoint, methods=["POST"])])
    http = httpx.AsyncClient(timeout=30)
    floor_url, floor_task, floor_server = await serving(lambda url: floor_app())
    url, task, server = await serving(lambda url: app)

    async def inproc() -> Timed:  # its events are a context manager's (2.x)
        start = time.perf_counter()
        async with agent.run_stream_events("go") as events:
            return await in_process(events, is_delta, start)

    runners = {
        "inproc": inproc,
        "floor": lambda: agui_request(http, f"{floor_url}/agent"),
        "agui": lambda: agui_request(http, f"{url}/agent"),
    }
    try:
        figures = await measure(runners, requests, warmup)
    finally:
        await http.aclose()
        await stop(floor_task, floor_server)
        await stop(task, server)
    print(json.dumps(figures))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.warmup))
