"""The gemini plugin's own cost per model call, against calling the same SDK directly.

Both clients talk to one local server process (``wire_server.py gemini``: recorded Gemini API
answers over keep-alive HTTP/1.1), each with its own ``google.genai.Client``, made once.

- **request**: ``GeminiModel.request(ModelRequest)`` (contents and config built from agentkit
  messages, the answer read into a ``ModelResponse`` with its usage) vs
  ``client.aio.models.generate_content(**the same call)`` returning the SDK's response.
- **time to first delta**: from the call to the first text delta, ``GeminiModel.stream()`` vs
  ``generate_content_stream`` iterated to its first chunk with text; the rest of each stream is
  drained outside the timing.

Rounds are interleaved (the order rotated each round) and a figure is the median over rounds of
a round's mean, with the range; ratios and differences are taken within a round. Writes
``RESULTS-gemini.md`` beside this file.

    python benchmarks/models/bench_gemini.py [calls] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from agentkit_model_gemini import GeminiModel
from agentkit_model_gemini import messages_to_gemini

from agentkit_core import Message
from agentkit_core.plugin import ModelRequest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
WARM_UP = 50
MODEL = "gemini-2.5-flash"
REQUEST = ModelRequest(
    (Message.system("Be brief."), Message.user("What is the capital of France?")),
    settings={"temperature": 0.2},
)

TEMPLATE = """# gemini plugin: per-call overhead against the bare SDK

Measured {when} on {machine}, {cpus} CPUs (shared, other jobs running: load average {load}
over the rounds), Python {python}, google-genai {sdk}, by `{command}`.

Both clients talk to one local server process (`wire_server.py gemini`, the plugin tests' recorded
`plain.json` / `plain.sse` over keep-alive HTTP/1.1), each with its own `google.genai.Client`
made once. The bare SDK call gets the very contents and config the plugin builds (same bytes on
the wire). After {warm_up} warm-up calls each, {rounds} interleaved rounds (order rotated) of
{per_round} sequential calls per client; a figure is the median over the rounds of a round's
mean, with the range; ratios and differences are taken within a round.

| what | bare SDK | agentkit plugin | plugin vs SDK | target |
|---|---:|---:|---:|---:|
| `request()` vs `generate_content()`, µs | {sdk_request} | {plugin_request} | {ratio}x | ≤ 1.1x |
| time to first text delta, µs | {sdk_ttfd} | {plugin_ttfd} | {ttfd_diff} µs | ≤ +1,000 µs |

Verdict: request {request_verdict}; time to first delta {ttfd_verdict}. The plugin's own work
per call is building `contents` and the config dict from agentkit messages and settings and
reading the SDK's response (parts, usage, finish reason) into a `ModelResponse`; per streamed
chunk, the same read of its parts. Most of a call is the SDK's own (pydantic validation of the
config and the answer, httpx2). Run it with:

```
{command}
```
"""


async def timed(call: Callable[[], Awaitable[float | None]], n: int) -> float:
    """Mean seconds per call over ``n`` calls (a call may return its own measured time)."""
    total = 0.0
    for _ in range(n):
        started = time.perf_counter()
        own = await call()
        total += own if own is not None else time.perf_counter() - started
    return total / n


async def measure(
    url: str, per_round: int, rounds: int
) -> tuple[dict[str, list[float]], list[float]]:
    from google import genai

    bare = genai.Client(api_key="k", http_options={"base_url": url})
    model = GeminiModel(MODEL, api_key="k", base_url=url)
    # built once, outside the timing: the bare SDK pays nothing of the plugin's work
    config = model.config(REQUEST)
    _, contents = messages_to_gemini(REQUEST.messages, model=model.name)
    before = repr(config)

    def call() -> dict[str, Any]:
        return {"model": MODEL, "contents": contents, "config": config}

    async def sdk_request() -> None:
        await bare.aio.models.generate_content(**call())

    async def plugin_request() -> None:
        await model.request(REQUEST)

    async def sdk_ttfd() -> float:
        started = time.perf_counter()
        first = 0.0
        async for chunk in await bare.aio.models.generate_content_stream(**call()):
            if not first and chunk.text:
                first = time.perf_counter() - started
        return first

    async def plugin_ttfd() -> float:
        started = time.perf_counter()
        first = 0.0
        async for event in model.stream(REQUEST):
            if not first and event.kind == "text":
                first = time.perf_counter() - started
        return first

    calls = {
        "sdk_request": sdk_request,
        "plugin_request": plugin_request,
        "sdk_ttfd": sdk_ttfd,
        "plugin_ttfd": plugin_ttfd,
    }
    for timed_call in calls.values():
        await timed(timed_call, WARM_UP)
    names = list(calls)
    times: dict[str, list[float]] = {name: [] for name in names}
    loads: list[float] = []
    for r in range(rounds):
        loads.append(os.getloadavg()[0])
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name].append(await timed(calls[name], per_round))
        loads.append(os.getloadavg()[0])
        done = ", ".join(f"{n} {t[-1] * 1e6:,.0f} µs" for n, t in times.items())
        print(f"round {r + 1}: {done}", file=sys.stderr)
    assert repr(config) == before, "the SDK changed the config it was given"
    await bare.aio.aclose()
    await model.aclose()
    return times, loads


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", nargs="?", type=int, default=3000, help="calls per client")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    per_round = max(args.calls // args.rounds, 1)
    server = subprocess.Popen(
        [sys.executable, str(HERE / "wire_server.py"), "gemini"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        times, loads = asyncio.run(measure(url, per_round, args.rounds))
    finally:
        server.terminate()
        server.wait()
    us = {name: [t * 1e6 for t in values] for name, values in times.items()}
    ratios = [p / s for p, s in zip(us["plugin_request"], us["sdk_request"], strict=True)]
    diffs = [p - s for p, s in zip(us["plugin_ttfd"], us["sdk_ttfd"], strict=True)]
    ratio, diff = statistics.median(ratios), statistics.median(diffs)
    command = f"python benchmarks/models/bench_gemini.py {args.calls} --rounds {args.rounds}"
    text = TEMPLATE.format(
        when=started,
        machine=platform.machine(),
        cpus=os.cpu_count(),
        load=f"{min(loads):.1f}–{max(loads):.1f}",
        python=platform.python_version(),
        sdk=version("google-genai"),
        command=command,
        warm_up=WARM_UP,
        rounds=args.rounds,
        per_round=per_round,
        sdk_request=spread(us["sdk_request"], ",.0f"),
        plugin_request=spread(us["plugin_request"], ",.0f"),
        ratio=spread(ratios, ".3f"),
        sdk_ttfd=spread(us["sdk_ttfd"], ",.0f"),
        plugin_ttfd=spread(us["plugin_ttfd"], ",.0f"),
        ttfd_diff=spread(diffs, "+,.0f"),
        request_verdict=f"{'met' if ratio <= 1.1 else 'missed'} ({ratio:.3f}x at the median)",
        ttfd_verdict=f"{'met' if diff <= 1000 else 'missed'} ({diff:+,.0f} µs at the median)",
    )
    (HERE / "RESULTS-gemini.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
