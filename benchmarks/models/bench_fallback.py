"""A fallback chain's cost on the success path, and the cost of pricing one request.

- **fallback overhead**: one model call through a run's invoker (tracing, metering, retry) to
  ``AnthropicModel`` against the local server (``wire_server.py anthropic``: recorded answers
  over keep-alive HTTP/1.1), the model alone vs the same model first in a
  ``FallbackModel([claude, gpt])`` whose first model answers. The chain adds its attempt span,
  its retry policy around the model and the answer's copy naming who answered. The same pair
  is also timed on an in-memory model that answers at once, to show the chain's own µs.
- **cost per request**: ``cost_of(usage, model)`` (a flat price from the ``[prices]`` config:
  the lookup is a dict hit after the first call) and a whole ``_Metering`` step's pricing.

The two invokers take turns call by call (the order rotated each round); a figure is the median
over rounds of a round's mean, with the range; ratios are taken within a round. Writes
``RESULTS-fallback.md`` beside this file.

    python benchmarks/models/bench_fallback.py [calls] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

from agentkit_model_anthropic import AnthropicModel
from agentkit_model_openai import OpenAIModel

from agentkit_core import FallbackModel
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import cost_of
from agentkit_core.plugin import reset_plugin_manager

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

from agentkit_core import PluginManager

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

HERE = Path(__file__).resolve().parent
WARM_UP = 50
REQUEST = ModelRequest(
    (Message.system("Be brief."), Message.user("What is the capital of France?"))
)

TEMPLATE = """# Fallback chain and cost accounting (issue 38)

Measured {when} on {machine}, {cpus} CPUs (shared, other jobs running: load average {load}),
Python {python}, by `{command}`.

The model calls go to one local server process (`wire_server.py anthropic`, the anthropic
plugin tests' recorded `plain.json` over keep-alive HTTP/1.1) through a run's invoker (tracing,
metering, retry). After {warm} warm-up calls each, {rounds} rounds of {per_round} calls per
invoker, taking turns call by call; a figure is the median over rounds of a round's mean, with
the range; ratios are taken within a round.

| what | single model | fallback chain (first model answers) | chain vs single | target |
|---|---:|---:|---:|---:|
| a model call over HTTP, µs | {wire_single} | {wire_chain} | {wire_ratio}x | ≤ 1.02x |
| a model call to an in-memory model, µs | {mem_single} | {mem_chain} | {mem_added} µs | measured |

| what | µs per request | target |
|---|---:|---:|
| `cost_of(usage, model)`, a flat price (a `[prices]` table) | {cost_of} | ≤ 5 µs |
| `Price.cost(usage)` alone | {price_cost} | measured |

Verdict: fallback overhead {wire_verdict}; cost per request {cost_verdict}. The chain's own work
on the success path is one `model_attempt` span, its retry policy's frame around the model and
a `dataclasses.replace` of the answer naming the model that gave it: the in-memory row is that
work alone, a few µs on a call that costs milliseconds over the wire. Run it with:

```
{command}
```
"""


async def timed_together(
    calls: dict[str, Callable[[], Awaitable[object]]], n: int, offset: int
) -> dict[str, float]:
    """Mean seconds per call of each of ``calls``, taking turns call by call ``n`` times."""
    names = list(calls)
    names = names[offset % len(names) :] + names[: offset % len(names)]
    total = dict.fromkeys(names, 0.0)
    for _ in range(n):
        for name in names:
            started = time.perf_counter()
            await calls[name]()
            total[name] += time.perf_counter() - started
    return {name: t / n for name, t in total.items()}


class Instant:
    """A model that answers at once: the chain's own cost, with nothing to hide it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.answer = ModelResponse(Message.assistant("Paris."), Usage(20, 3, 1))

    async def request(self, request: ModelRequest) -> ModelResponse:
        return self.answer

    def stream(self, request: ModelRequest) -> object:
        raise NotImplementedError


async def measure(url: str, per_round: int, rounds: int) -> dict[str, list[float]]:
    claude = AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=url)
    gpt = OpenAIModel("gpt-4o-mini", api_key="k", base_url="http://127.0.0.1:9/v1")
    invokers = {
        "wire_single": RunContext(model=claude).invoker,
        "wire_chain": RunContext(model=FallbackModel([claude, gpt])).invoker,
        "mem_single": RunContext(model=Instant("a:x")).invoker,
        "mem_chain": RunContext(model=FallbackModel([Instant("a:x"), Instant("b:y")])).invoker,
    }
    calls = {name: (lambda inv=inv: inv.chat(REQUEST)) for name, inv in invokers.items()}  # type: ignore[union-attr]
    await timed_together(calls, WARM_UP, 0)
    figures: dict[str, list[float]] = {name: [] for name in calls}
    figures["wire_ratio"] = []
    for r in range(rounds):
        got = await timed_together(calls, per_round, r)
        for name, seconds in got.items():
            figures[name].append(seconds * 1e6)
        figures["wire_ratio"].append(got["wire_chain"] / got["wire_single"])
    return figures


def time_cost(n: int = 200_000) -> tuple[float, float]:
    """µs per ``cost_of`` (prices from a ``[prices]`` table) and per ``Price.cost``."""
    from agentkit_core.plugin import Price

    usage = Usage(1234, 567, 1, 800, 0, 100)
    cost_of(usage, "shop:model", manager=PM)
    started = time.perf_counter()
    for _ in range(n):
        cost_of(usage, "shop:model", manager=PM)
    whole = (time.perf_counter() - started) / n * 1e6
    price = Price(1.0, 2.0, cache_read=0.1)
    started = time.perf_counter()
    for _ in range(n):
        price.cost(usage)
    return whole, (time.perf_counter() - started) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", type=int, nargs="?", default=4000)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "agentkit.toml"
        config.write_text('[prices."shop:model"]\ninput = 1.0\noutput = 2.0\ncache_read = 0.1\n')
        os.environ["AGENTKIT_CONFIG"] = str(config)
        os.environ["AGENTKIT_LOAD_PLUGINS"] = ""
        reset_plugin_manager()
        cost_runs = [time_cost() for _ in range(5)]
    server = subprocess.Popen(
        [sys.executable, str(HERE / "wire_server.py"), "anthropic"],
        stdout=subprocess.PIPE,
        text=True,
    )
    loads = [os.getloadavg()[0]]
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        figures = asyncio.run(measure(url, args.calls // args.rounds, args.rounds))
    finally:
        server.terminate()
    loads.append(os.getloadavg()[0])
    ratio = statistics.median(figures["wire_ratio"])
    cost = statistics.median(c[0] for c in cost_runs)
    command = f"python benchmarks/models/bench_fallback.py {args.calls} --rounds {args.rounds}"
    added = [c - s for c, s in zip(figures["mem_chain"], figures["mem_single"], strict=True)]
    text = TEMPLATE.format(
        when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        machine=platform.machine(),
        cpus=os.cpu_count(),
        load=f"{min(loads):.1f}–{max(loads):.1f}",
        python=platform.python_version(),
        command=command,
        warm=WARM_UP,
        rounds=args.rounds,
        per_round=args.calls // args.rounds,
        wire_single=spread(figures["wire_single"], ",.0f"),
        wire_chain=spread(figures["wire_chain"], ",.0f"),
        wire_ratio=spread(figures["wire_ratio"], ".3f"),
        mem_single=spread(figures["mem_single"], ".1f"),
        mem_chain=spread(figures["mem_chain"], ".1f"),
        mem_added=spread(added, "+.1f"),
        cost_of=spread([c[0] for c in cost_runs], ".2f"),
        price_cost=spread([c[1] for c in cost_runs], ".2f"),
        wire_verdict=f"{'met' if ratio <= 1.02 else 'missed'} ({ratio:.3f}x at the median)",
        cost_verdict=f"{'met' if cost <= 5 else 'missed'} ({cost:.2f} µs at the median)",
    )
    (HERE / "RESULTS-fallback.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
