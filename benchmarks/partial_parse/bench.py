"""Partial parsing of a streamed JSON document: agentkit's incremental stream beside the peers.

Every peer re-parses the whole buffer after each chunk (quadratic in the stream's length);
agentkit's PartialJSONParser keeps its state and its value tree live (linear). Each approach
produces the partial value after every chunk.

    bash benchmarks/partial_parse/setup.sh      # prints the venv's python
    benchmarks/.envs/partial_parse/bin/python benchmarks/partial_parse/bench.py
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Callable
from importlib.metadata import version

import agentkit_schema_pydantic
import json_repair
import pydantic
import pydantic_core
from pydantic import BaseModel

from agentkit_core import PartialJSONParser
from agentkit_core import PluginManager
from agentkit_core import adapt


class Item(BaseModel):
    id: int
    name: str
    price: float
    tags: list[str]
    active: bool
    note: str | None = None


class Catalog(BaseModel):
    title: str
    items: list[Item]


def document(size: int) -> str:
    """A deterministic catalog of about ``size`` bytes, with escapes and non-ASCII text."""
    items = []
    text = ""
    i = 0
    while len(text) < size:
        items.append(
            {
                "id": i,
                "name": f'item {i} — "quoted" and \\ slashed',
                "price": round(i * 1.37 + 0.5, 2),
                "tags": ["alpha", f"t{i % 7}", "é\u00e8\U0001f600"],
                "active": i % 3 == 0,
                "note": None if i % 4 else f"line one\nline two {i}",
            }
        )
        i += 1
        if i % 16 == 0 or len(text) + 200 >= size:
            text = json.dumps({"title": "catalog", "items": items})
    return text


def chunks(text: str, n: int) -> list[str]:
    step = -(-len(text) // n)
    return [text[i : i + step] for i in range(0, len(text), step)]


def agentkit_stream(parts: list[str]) -> None:
    parser = PartialJSONParser()
    for part in parts:
        parser.feed(part)  # returns the partial value, current() after every chunk
    parser.finish()


TYPED = adapt(
    Catalog, manager=PluginManager(entry_points=False, plugins=[agentkit_schema_pydantic])
)


def agentkit_typed(parts: list[str]) -> None:
    stream = TYPED.stream()
    for part in parts:
        stream.feed(part)  # a Catalog built without validation, after every chunk


def reparse(fn: Callable[[str], object]) -> Callable[[list[str]], None]:
    def run(parts: list[str]) -> None:
        buf = ""
        for part in parts:
            buf += part
            fn(buf)

    return run


pydantic_raw = reparse(lambda buf: pydantic_core.from_json(buf, allow_partial=True))
_CATALOG = pydantic.TypeAdapter(Catalog)


def _validate_partial(buf: str) -> object:
    try:  # required fields must have arrived: until then there is no partial Catalog
        return _CATALOG.validate_json(buf, experimental_allow_partial=True)
    except pydantic.ValidationError:
        return None


pydantic_typed = reparse(_validate_partial)
json_repair_raw = reparse(json_repair.loads)


def timed(run: Callable[[list[str]], None], parts: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run(parts)
        best = min(best, time.perf_counter() - start)
    return best


def sampled(fn: Callable[[str], object], parts: list[str], samples: int = 40) -> float:
    """Estimated total of re-parsing after every chunk, from ``samples`` evenly spaced cuts."""
    prefix = [0]
    for part in parts:
        prefix.append(prefix[-1] + len(part))
    text = "".join(parts)
    picks = [round((k + 0.5) * len(parts) / samples) for k in range(samples)]
    total = 0.0
    for k in picks:
        buf = text[: prefix[max(k, 1)]]
        start = time.perf_counter()
        fn(buf)
        total += time.perf_counter() - start
    return total / samples * len(parts)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def main() -> None:
    print(f"Python {platform.python_version()}, pydantic {pydantic.VERSION}, ", end="")
    print(f"pydantic-core {pydantic_core.__version__}, json-repair {version('json-repair')}\n")
    print(
        "| document | chunks | agentkit stream (ms) | agentkit typed (ms) | pydantic "
        "from_json re-parse (ms) | pydantic TypeAdapter re-parse (ms) | json-repair re-parse "
        "(ms) | agentkit / pydantic |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in (20_000, 200_000):
        text = document(size)
        for n in (1_000, 10_000):
            parts = chunks(text, n)
            ours = timed(agentkit_stream, parts, 3)
            typed = timed(agentkit_typed, parts, 1)
            peer = timed(pydantic_raw, parts, 1)
            peer_typed = timed(pydantic_typed, parts, 1)
            if size == 20_000 and n == 1_000:
                repair = ms(timed(json_repair_raw, parts, 1))
            else:
                repair = f"~{ms(sampled(json_repair.loads, parts))} (est.)"
            print(
                f"| {len(text) // 1000} KB | {n:,} | {ms(ours)} | {ms(typed)} | {ms(peer)} | "
                f"{ms(peer_typed)} | {repair} | {ours / peer:.3f}x |"
            )
            sys.stdout.flush()
    print("\nLinearity (same chunk size, document doubled):\n")
    print(
        "| chunk size | document | agentkit (ms) | x of half | pydantic re-parse (ms) | x of half |"
    )
    print("|---|---|---|---|---|---|")
    for step in (20, 2):
        last: tuple[float, float] | None = None
        for size in (20_000, 40_000, 80_000, 160_000):
            text = document(size)
            parts = [text[i : i + step] for i in range(0, len(text), step)]
            ours = timed(agentkit_stream, parts, 3)
            peer = timed(pydantic_raw, parts, 1) if len(parts) <= 40_000 else None
            ratio = f"{ours / last[0]:.2f}x" if last else ""
            pratio = f"{peer / last[1]:.2f}x" if last and peer and last[1] else ""
            print(
                f"| {step} B | {len(text) // 1000} KB | {ms(ours)} | {ratio} | "
                f"{ms(peer) if peer else 'not run'} | {pratio} |"
            )
            last = (ours, peer or 0.0)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
