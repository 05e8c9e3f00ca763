"""The anthropic plugin's own cost per model call, against calling the same SDK directly.

Both clients talk to one local server process (``wire_server.py anthropic``: recorded Messages
API answers over keep-alive HTTP/1.1), with one SDK client each, made once, ``max_retries=0``.

- **request**: ``AnthropicModel.request(ModelRequest)`` (body built from agentkit messages,
  cache breakpoints placed, the answer mapped to a ``ModelResponse``) vs
  ``AsyncAnthropic.messages.create(**the same body)`` returning the SDK's ``Message``.
- **time to first delta**: from the call to the first text delta, ``AnthropicModel.stream()``
  vs ``messages.create(stream=True)`` iterated to its first ``text_delta``; the rest of each
  stream is drained outside the timing.

In each round the four calls take turns call by call (the order rotated each round), so load
falls on all alike; a figure is the median over rounds of a round's mean, with the range;
ratios and differences are taken within a round. Writes
``RESULTS-anthropic.md`` beside this file.

    python benchmarks/models/bench_anthropic.py [calls] [--rounds N]
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

from agentkit_model_anthropic import AnthropicModel

from agentkit_core import Message
from agentkit_core.plugin import ModelRequest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
WARM_UP = 50
REQUEST = ModelRequest(
    (Message.system("Be brief."), Message.user("What is the capital of France?"))
)

TEMPLATE = """# anthropic plugin: per-call overhead against the bare SDK

Measured {when} on {machine}, {cpus} CPUs (shared, other jobs running: load average {load}
over the rounds), Python {python}, anthropic {sdk}, by `{command}`.

Both clients talk to one local server process (`wire_server.py anthropic`, the plugin tests'
recorded `plain.json` / `plain.sse` over keep-alive HTTP/1.1), each with its own SDK client
made once.
After {warm_up} warm-up calls each, {rounds} rounds of {per_round} calls per client, the clients
taking turns call by call (the order rotated each round); a figure is the median over the
rounds of a round's mean, with the range; ratios and differences are taken within a round.

| what | bare SDK | agentkit plugin | plugin vs SDK | target |
|---|---:|---:|---:|---:|
| `request()` vs `create()`, µs/call | {sdk_request} | {plugin_request} | {ratio}x | ≤ 1.1x |
| time to first text delta, µs | {sdk_ttfd} | {plugin_ttfd} | {ttfd_diff} µs | ≤ +1,000 µs |

Verdict: request {request_verdict}; time to first delta {ttfd_verdict}. The plugin's own work
per call is building the body from agentkit messages (system blocks, cache breakpoints),
`to_dict()` of the SDK's answer and mapping it onto a `ModelResponse`; per stream event, one
`to_dict()` and the assembler's step. Run it with:

```
{command}
```
"""


def sdk_body() -> dict[str, object]:
    """The body the plugin sends for REQUEST, for the SDK directly (same bytes on the wire)."""
    return AnthropicModel("claude-sonnet-4-5", api_key="k").body(REQUEST)


async def timed_together(
    calls: dict[str, Callable[[], Awaitable[float | None]]], n: int, offset: int
) -> dict[str, float]:
    """Mean seconds per call of each of ``calls``, taking turns call by call ``n`` times.

    Turn by turn, so a slow spell of the shared machine falls on every client alike; the order
    within a turn is rotated by ``offset``. A call may return its own measured time.
    """
    names = list(calls)
    names = names[offset % len(names) :] + names[: offset % len(names)]
    total = dict.fromkeys(names, 0.0)
    for _ in range(n):
        for name in names:
            started = time.perf_counter()
            own = await calls[name]()
            total[name] += own if own is not None else time.perf_counter() - started
    return {name: t / n for name, t in total.items()}


async def measure(
    url: str, per_round: int, rounds: int
) -> tuple[dict[str, list[float]], list[float]]:
    from anthropic import AsyncAnthropic

    bare = AsyncAnthropic(api_key="k", base_url=url, max_retries=0)
    model = AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=url)
    body = sdk_body()

    async def sdk_request() -> None:
        await bare.messages.create(**body)  # type: ignore[call-overload]

    async def plugin_request() -> None:
        await model.request(REQUEST)

    async def sdk_ttfd() -> float:
        started = time.perf_counter()
        stream = await bare.messages.create(**body, stream=True)  # type: ignore[call-overload]
        first = 0.0
        async for event in stream:
            if not first and event.type == "content_block_delta":
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
    await timed_together(calls, WARM_UP, 0)
    times: dict[str, list[float]] = {name: [] for name in calls}
    loads: list[float] = []
    for r in range(rounds):
        loads.append(os.getloadavg()[0])
        for name, mean in (await timed_together(calls, per_round, r)).items():
            times[name].append(mean)
        loads.append(os.getloadavg()[0])
        done = ", ".join(f"{n} {t[-1] * 1e6:,.0f} µs" for n, t in times.items())
        print(f"round {r + 1}: {done}", file=sys.stderr)
    await bare.close()
    await model.aclose()
    return times, loads


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", nargs="?", type=int, default=4000, help="calls per client")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    per_round = max(args.calls // args.rounds, 1)
    server = subprocess.Popen(
        [sys.executable, str(HERE / "wire_server.py"), "anthropic"],
        stdout=subprocess.PIPE,
        text=True,
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
    text = TEMPLATE.format(
        when=started,
        machine=platform.machine(),
        cpus=os.cpu_count(),
        load=f"{min(loads):.1f}–{max(loads):.1f}",
        python=platform.python_version(),
        sdk=version("anthropic"),
        command=f"python benchmarks/models/bench_anthropic.py {args.calls} --rounds {args.rounds}",
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
    (HERE / "RESULTS-anthropic.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
