"""What both sides share: the answer, the AG-UI client, the socket server and the timing.

Imported by ``bench_agentkit.py`` and by ``bench_pydantic_ai.py`` (in pydantic-ai's venv), so it
needs only httpx and uvicorn. Every request is timed from the call to its first text delta and
to its end (``RUN_FINISHED`` over AG-UI), the client reading the whole SSE stream as a browser
would: each ``data:`` line parsed as JSON.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import statistics
import time
import uuid
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import httpx

#: The model's answer, streamed in 8-character deltas on both sides (4 deltas).
ANSWER = "Hello from the serving benchmark."
CHUNK = 8
#: A request's two figures: microseconds to the first text delta, and to the run's end.
Timed = tuple[float, float]
#: One way of running a request: returns its ``Timed``.
Runner = Callable[[], Awaitable[Timed]]
#: The thread's CPU time (ns) at the request's first text, as ``first_text`` saw it: server and
#: client share the thread, so it is the CPU spent on the request, whatever else the machine runs
FIRST_CPU: list[int] = []


def first_text() -> float:
    """``time.perf_counter()`` at a request's first text; keeps the thread's CPU time then."""
    FIRST_CPU.append(time.thread_time_ns())
    return time.perf_counter()


def chunks(text: str = ANSWER) -> list[str]:
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]


def agui_body(text: str = "go") -> dict[str, Any]:
    """A ``RunAgentInput`` on a new thread: one user message, nothing else."""
    return {
        "threadId": uuid.uuid4().hex,
        "runId": uuid.uuid4().hex,
        "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": text}],
        "state": None,
        "tools": [],
        "context": [],
        "forwardedProps": None,
    }


def a2a_stream_body() -> dict[str, Any]:
    """A2A ``message/stream`` on a new context, in A2A 0.3's names (the SDK's compatibility
    layer takes it): one user message."""
    message = {
        "kind": "message",
        "role": "user",
        "parts": [{"kind": "text", "text": "go"}],
        "messageId": uuid.uuid4().hex,
        "contextId": uuid.uuid4().hex,
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {"message": message}}


async def agui_request(client: httpx.AsyncClient, url: str, expect: str | None = ANSWER) -> Timed:
    """POST a run and read its SSE stream to ``RUN_FINISHED``; its text is ``expect``'s."""
    start = time.perf_counter()
    first = end = 0.0
    text = ""
    async with client.stream("POST", url, json=agui_body()) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            kind = event["type"]
            if kind == "TEXT_MESSAGE_CONTENT":
                first = first or first_text()
                text += event["delta"]
            elif kind == "RUN_FINISHED":
                end = time.perf_counter()
            elif kind == "RUN_ERROR":
                raise RuntimeError(f"the run failed: {event}")
    assert text == (expect or text) and first and end, (text, first, end)
    return (first - start) * 1e6, (end - start) * 1e6


async def in_process(
    events: AsyncIterator[Any], is_delta: Callable[[Any], bool], start: float | None = None
) -> Timed:
    """Consume an in-process event stream: to the first text delta, and to its end.

    ``start``: when the run was asked for, if that was before its events (a session opened).
    """
    start = time.perf_counter() if start is None else start
    first = 0.0
    async for event in events:
        if not first and is_delta(event):
            first = first_text()
    end = time.perf_counter()
    assert first
    return (first - start) * 1e6, (end - start) * 1e6


def floor_app() -> Any:
    """The HTTP floor: a Starlette route streaming a run's AG-UI events, canned, no agent.

    The events a one-turn run sends (started, the message's start, each delta, its end,
    finished), so ``agui_request`` reads it as a run: what uvicorn, Starlette, SSE and the client
    cost with nothing behind them.
    """
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    ids = {"threadId": "t", "runId": "r"}
    events = [
        {"type": "RUN_STARTED", **ids},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": c} for c in chunks()),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", **ids},
    ]
    lines = [f"data: {json.dumps(event)}\n\n" for event in events]

    async def run(request: Any) -> StreamingResponse:
        await request.body()

        async def stream() -> AsyncIterator[str]:
            for line in lines:
                yield line

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/agent", run, methods=["POST"])])


def bind() -> socket.socket:
    """A listening socket on 127.0.0.1, port 0 (the kernel picks a free port), as serve_asgi binds.

    Its protocol is named (TCP), as ``getaddrinfo`` names it for ``agentkit serve``: asyncio turns
    Nagle off only on a connection whose socket says TCP, and with Nagle on, a response written
    in pieces (A2A's) waits ~40 ms for the client's delayed acknowledgement.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serving(make_app: Callable[[str], Any]) -> tuple[str, asyncio.Task[None], Any]:
    """Serve ``make_app(url)`` under uvicorn on a real local socket; its URL, task and server.

    The app is made once the socket is bound, for an app that must know its own URL (A2A's card).
    """
    import uvicorn

    sock = bind()
    host, port = sock.getsockname()[:2]
    url = f"http://{host}:{port}"
    app = make_app(url)
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    return url, task, server


async def stop(task: asyncio.Task[None], server: Any) -> None:
    server.should_exit = True
    await asyncio.gather(task, return_exceptions=True)


async def measure(runners: dict[str, Runner], requests: int, warmup: int) -> dict[str, Any]:
    """Each runner ``warmup`` times, then ``requests`` times each, interleaved one by one.

    Returns, per runner, the medians of both figures (µs), and of the CPU time to the first
    text where the runner marks it with ``first_text``; interleaving request by request puts
    a slow spell of the shared machine on every runner alike, and no request pays for the
    garbage of another.
    """
    for _ in range(warmup):
        for run in runners.values():
            await run()
    seen: dict[str, list[Timed]] = {name: [] for name in runners}
    cpu: dict[str, list[float]] = {name: [] for name in runners}
    names = list(runners)
    gc.disable()  # the collector runs between requests, so its pauses fall on no row
    try:
        for i in range(requests):
            for name in names[i % len(names) :] + names[: i % len(names)]:  # each first in turn
                FIRST_CPU.clear()
                began = time.thread_time_ns()
                seen[name].append(await runners[name]())
                if FIRST_CPU:
                    cpu[name].append((FIRST_CPU[0] - began) / 1e3)
                gc.collect()
    finally:
        gc.enable()
    return {
        name: {
            "first_us": round(statistics.median(t[0] for t in timed), 1),
            "end_us": round(statistics.median(t[1] for t in timed), 1),
            **({"first_cpu_us": round(statistics.median(cpu[name]), 1)} if cpu[name] else {}),
        }
        for name, timed in seen.items()
    }
