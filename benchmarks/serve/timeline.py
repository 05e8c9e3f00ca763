"""Where an A2A request's time goes: a wall-clock timeline of one ``message/stream``.

Stamps (``time.perf_counter_ns``) along one request, the server and the client in one process
(as ``bench_agentkit.py`` runs them): the client's call, the ASGI app called, the request body
received, the JSON-RPC dispatch, the executor started, the run's first text delta, each event
the executor enqueues, each task-store save (start, end), each SSE body written, the client's
first artifact line, its end; and the process's CPU time per request (server and client).
Prints, per stamp, the median µs of CPU and of wall-clock time since the client's call over
``--requests`` requests (after ``--warmup``), in the order they happen. ``--otel on|off`` sets
``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED`` before the SDK is imported (by default the plugin
turns the SDK's spans off, OpenTelemetry being unconfigured). ``--stand-in`` puts an executor
with no agent, sending the same events, in agentkit's place: the SDK's own floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from collections import defaultdict
from typing import Any

#: name -> (wall ns, the thread's CPU ns): server and client share the thread, so the CPU
#: between two stamps is the work done between them, whatever else the machine runs
STAMPS: dict[str, tuple[int, int]] = {}


def stamp(name: str) -> None:
    """The first time ``name`` happens in the request being timed (later ones are numbered)."""
    key, n = name, 1
    while key in STAMPS:
        n += 1
        key = f"{name} #{n}"
    STAMPS[key] = (time.perf_counter_ns(), time.thread_time_ns())


def instrument(agent: bool) -> None:
    """Wrap the server's steps so each stamps when it runs (without ``agent``: the stand-in)."""
    from a2a.server.routes import jsonrpc_dispatcher
    from agentkit_serve_a2a import _executor
    from agentkit_serve_a2a import _tasks

    if not agent:
        from a2a_floor import stand_in

        _executor.KitExecutor.execute = stand_in  # type: ignore[method-assign]

    dispatcher = jsonrpc_dispatcher.JsonRpcDispatcher
    handle = dispatcher.handle_requests

    async def handle_requests(self: Any, request: Any) -> Any:
        stamp("JSON-RPC dispatch")
        return await handle(self, request)

    dispatcher.handle_requests = handle_requests  # type: ignore[method-assign]

    execute = _executor.KitExecutor.execute

    async def executing(self: Any, context: Any, queue: Any) -> None:
        stamp("executor start")
        enqueue = queue.enqueue_event

        async def enqueued(event: Any) -> None:
            stamp(f"enqueue {type(event).__name__}")
            await enqueue(event)
            stamp(f"enqueued {type(event).__name__}")

        queue.enqueue_event = enqueued
        await execute(self, context, queue)

    _executor.KitExecutor.execute = executing  # type: ignore[method-assign]

    follow = _executor.KitExecutor.follow

    async def following(self: Any, events: Any, updater: Any) -> None:
        stamp("run asked for")

        async def stamped() -> Any:
            async for event in events:
                stamp(f"run {type(event).__name__}")
                yield event

        await follow(self, stamped(), updater)

    _executor.KitExecutor.follow = following  # type: ignore[method-assign]

    save = _tasks.SessionTaskStore.save

    async def saving(self: Any, task: Any, **kw: Any) -> Any:
        stamp("store save start")
        try:
            return await save(self, task, **kw)
        finally:
            stamp("store save end")

    _tasks.SessionTaskStore.save = saving  # type: ignore[method-assign]


class Stamped:
    """The ASGI app, stamping its call, the body's arrival and each body it writes."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            stamp("ASGI app called")

        async def received() -> Any:
            message = await receive()
            stamp("ASGI body received")
            return message

        async def sent(message: Any) -> None:
            if message["type"] == "http.response.body" and message.get("body"):
                what = "artifact" if b"artifact" in message["body"] else "event"
                stamp(f"SSE {what} written")
            await send(message)

        await self.app(scope, received, sent)


def v10_body() -> dict[str, Any]:
    """``SendStreamingMessage`` in A2A 1.0's names (sent with ``A2A-Version: 1.0``)."""
    message = {
        "role": "ROLE_USER",
        "parts": [{"text": "go"}],
        "messageId": uuid.uuid4().hex,
        "contextId": uuid.uuid4().hex,
    }
    params = {"message": message}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": params}


async def request(http: Any, url: str, version: str) -> None:
    from common import a2a_stream_body

    v10 = version == "1.0"
    body, headers = (v10_body(), {"A2A-Version": "1.0"}) if v10 else (a2a_stream_body(), {})
    STAMPS.clear()
    stamp("client call")
    async with http.stream("POST", url, json=body, headers=headers) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:") and "artifact" in line and "client artifact" not in STAMPS:
                stamp("client artifact")
    assert "client artifact" in STAMPS, "no answer streamed"
    stamp("client end")


async def main(requests: int, warmup: int, version: str, agent: bool) -> None:
    import httpx
    from agentkit_serve_a2a import a2a_app
    from common import ANSWER
    from common import serving
    from common import stop

    from agentkit_core import Kit
    from agentkit_core.testing import ScriptedModel

    instrument(agent)
    kit = await Kit.open(model=ScriptedModel([ANSWER] * (requests + warmup)), session="memory://")
    url, task, server = await serving(lambda url: Stamped(a2a_app(kit, url)))
    seen: dict[str, list[tuple[float, float]]] = defaultdict(list)
    cpu: list[float] = []
    async with httpx.AsyncClient(timeout=30) as http:
        for i in range(requests + warmup):
            began = time.process_time()
            await request(http, url + "/", version)
            cpu.append((time.process_time() - began) * 1e6)
            if i >= warmup:
                wall, spent = STAMPS["client call"]
                for name, (at, cpu_at) in STAMPS.items():
                    seen[name].append(((at - wall) / 1e3, (cpu_at - spent) / 1e3))
    await stop(task, server)
    await kit.aclose()
    rows = sorted(
        (statistics.median(t[1] for t in v), statistics.median(t[0] for t in v), k, len(v))
        for k, v in seen.items()
    )
    timeline = {name: [round(c), round(w)] for c, w, name, n in rows if n == requests}
    print(json.dumps({"cpu_us": round(statistics.median(cpu[warmup:])), **timeline}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--a2a", choices=["0.3", "1.0"], default="0.3", help="method names")
    parser.add_argument("--stand-in", action="store_true", help="no agent: the SDK's floor")
    parser.add_argument("--otel", choices=["on", "off", "default"], default="default")
    args = parser.parse_args()
    if args.otel != "default":
        os.environ["OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"] = str(args.otel == "on").lower()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    asyncio.run(main(args.requests, args.warmup, args.a2a, not args.stand_in))
