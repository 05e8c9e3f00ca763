"""Concurrent conversations per second: ``agentkit serve`` in a process of its own.

The server is the CLI (``python -m agentkit_core serve --protocol P --model test --port 0``),
one process; the clients are this process: ``C`` concurrent clients, each opening conversation
after conversation (a new thread / context each, one message, read to the run's end) for
``--seconds``. On 2 cores the server has one and the clients the other. Prints one JSON line:
per protocol and concurrency, conversations a second and the median and p95 latency (ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable
from collections.abc import Callable

import httpx
from bench_agentkit import a2a_raw
from common import Timed
from common import agui_request

#: The test model, on a port the kernel picks.
TEST_PORT_0 = ("--model", "test", "--port", "0")


def start(protocol: str) -> tuple[subprocess.Popen[str], str]:
    """``agentkit serve`` on a free port; the process and its URL, once it listens."""
    server = subprocess.Popen(
        [sys.executable, "-m", "agentkit_core", "serve", "--protocol", protocol, *TEST_PORT_0],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert server.stderr is not None
    for line in server.stderr:
        if "serving" in line:
            return server, line.rsplit(" ", 1)[-1].strip()
    raise RuntimeError(f"agentkit serve --protocol {protocol} did not start")


async def load(one: Callable[[], Awaitable[Timed]], clients: int, seconds: float) -> dict:
    latencies: list[float] = []
    until = time.perf_counter() + seconds

    async def client() -> None:
        while time.perf_counter() < until:
            latencies.append((await one())[1] / 1000)

    began = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    took = time.perf_counter() - began
    latencies.sort()
    return {
        "per_s": round(len(latencies) / took, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(latencies[int(len(latencies) * 0.95)], 2),
    }


def request_of(protocol: str, http: httpx.AsyncClient, url: str) -> Callable[[], Awaitable[Timed]]:
    """One conversation of ``protocol`` on the server at ``url``."""
    if protocol == "agui":
        return lambda: agui_request(http, f"{url}/agent", expect=None)
    return lambda: a2a_raw(http, f"{url}/", expect=None)


async def main(concurrency: list[int], seconds: float) -> None:
    figures: dict[str, dict[int, dict]] = {}
    for protocol in ("agui", "a2a"):
        server, url = start(protocol)
        try:
            limits = httpx.Limits(max_connections=max(concurrency))
            async with httpx.AsyncClient(timeout=60, limits=limits) as http:
                one = request_of(protocol, http, url)
                await load(one, 1, 1.0)  # warm-up
                figures[protocol] = {c: await load(one, c, seconds) for c in concurrency}
        finally:
            server.terminate()
            server.wait()
    print(json.dumps(figures))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(main(args.concurrency, args.seconds))
