"""The Responses API through agentkit-model-openai against the bare ``openai`` SDK.

Both talk to the same local keep-alive server (``wire_server.py openai-responses``, its own
process), which answers with the same recorded body, so what differs is the client's own work
per request:

- **request**: ``OpenAIResponsesModel.request`` (agentkit messages to ``input`` items, the body,
  httpx, parsing into a ModelResponse) vs ``AsyncOpenAI().responses.create(...)`` given the
  ``input`` items ready-made (the SDK's validation-free body, its httpx client, pydantic models);
- **time to first delta**: from the call to the first ``response.output_text.delta`` text, then
  the rest of the stream drained, each way.

Interleaved rounds; each figure is the median over rounds with its range, each ratio taken
within its round. Needs ``pip install openai`` (not a dependency of the plugin). Run:
``python benchmarks/models/bench_openai_responses.py [--rounds 7 --requests 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _report import spread
from agentkit_model_openai import OpenAIResponsesModel
from agentkit_model_openai import messages_to_responses

from agentkit_core import Message
from agentkit_core.plugin import ModelRequest

MESSAGES = (Message.system("Be brief."), Message.user("What is the capital of France?"))


async def per_request(call: Any, n: int) -> float:
    """Microseconds per call, over ``n`` calls (after a few to warm up)."""
    for _ in range(5):
        await call()
    start = time.perf_counter()
    for _ in range(n):
        await call()
    return (time.perf_counter() - start) / n * 1e6


async def first_delta(stream: Any, n: int) -> float:
    """Median microseconds from the call to the first text delta, over ``n`` streams."""
    times = []
    for i in range(n + 3):
        start = time.perf_counter()
        first = await stream()
        if i >= 3:
            times.append((first - start) * 1e6)
    return statistics.median(times)


async def measure(url: str, rounds: int, n: int) -> None:
    from openai import AsyncOpenAI

    request = ModelRequest(MESSAGES)
    items = messages_to_responses(MESSAGES, model="openai-responses:gpt-4.1-mini")
    sdk = AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    async with OpenAIResponsesModel("gpt-4.1-mini", base_url=url, api_key="sk-bench") as model:

        async def ours() -> None:
            await model.request(request)

        async def theirs() -> None:
            await sdk.responses.create(
                model="gpt-4.1-mini",
                input=items,
                store=False,
                include=["reasoning.encrypted_content"],
            )

        async def ours_stream() -> float:
            first = 0.0
            async for event in model.stream(request):
                if event.kind == "text" and not first:
                    first = time.perf_counter()
            return first

        async def theirs_stream() -> float:
            first = 0.0
            stream = await sdk.responses.create(
                model="gpt-4.1-mini",
                input=items,
                store=False,
                include=["reasoning.encrypted_content"],
                stream=True,
            )
            async for event in stream:
                if event.type == "response.output_text.delta" and not first:
                    first = time.perf_counter()
            return first

        rows: dict[str, list[float]] = {
            k: [] for k in ("ours", "sdk", "ratio", "t_ours", "t_sdk", "t_diff")
        }
        for r in range(rounds):
            pair = [(ours, "ours"), (theirs, "sdk")]
            for call, key in pair if r % 2 == 0 else pair[::-1]:
                rows[key].append(await per_request(call, n))
            rows["ratio"].append(rows["ours"][-1] / rows["sdk"][-1])
            spair = [(ours_stream, "t_ours"), (theirs_stream, "t_sdk")]
            for call, key in spair if r % 2 == 0 else spair[::-1]:
                rows[key].append(await first_delta(call, n // 3))
            rows["t_diff"].append(rows["t_ours"][-1] - rows["t_sdk"][-1])
    await sdk.close()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"{rounds} interleaved rounds, {n} requests each, load {load}")
    us = {k: spread(v, ".0f") for k, v in rows.items()}
    print(f"request   agentkit {us['ours']} µs, openai SDK {us['sdk']} µs")
    print(f"          ratio {spread(rows['ratio'])}x (target <= 1.1x)")
    print(f"1st delta agentkit {us['t_ours']} µs, openai SDK {us['t_sdk']} µs")
    print(f"          difference {spread(rows['t_diff'], '+.0f')} µs (target <= +1,000 µs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("wire_server.py")), "openai-responses"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        asyncio.run(measure(f"http://127.0.0.1:{port}/v1", args.rounds, args.requests))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
