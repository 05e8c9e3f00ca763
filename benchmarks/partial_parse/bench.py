"""Partial parsing of a streamed JSON document: agentkit's incremental stream beside the peers.

Every peer re-parses the whole buffer after each chunk (quadratic in the stream's length);
agentkit's PartialJSONParser keeps its state and its value tree live (linear). Each approach
produces the partial value after every chunk. Each round runs every approach once on every
document, in an order rotated from round to round, so a slow spell of the shared machine falls
on all alike; ratios are taken within a round, and RESULTS.md gives the median over the rounds
with the range, and the load average read before and after every round.

    bash benchmarks/partial_parse/setup.sh      # prints the venv's python
    benchmarks/.envs/partial_parse/bin/python benchmarks/partial_parse/bench.py [--rounds N]
        [--sizes B ...] [--chunks N ...] [--linearity-sizes B ...] [--steps B ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import agentkit_schema_pydantic
import json_repair
import pydantic
import pydantic_core
from pydantic import BaseModel

from agentkit_core import PluginManager
from agentkit_core.plugin import PartialJSONParser
from agentkit_core.plugin import adapt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

HERE = Path(__file__).resolve().parent
RUN = ["benchmarks/.envs/partial_parse/bin/python", "benchmarks/partial_parse/bench.py"]
STREAM = "agentkit stream"
TYPED_STREAM = "agentkit typed"
PYDANTIC = "pydantic from_json re-parse"
PYDANTIC_TYPED = "pydantic TypeAdapter re-parse"
REPAIR = "json-repair re-parse"
#: json-repair is run in full up to this document size × chunk count (20 KB in 1,000 chunks
#: takes seconds); beyond it, minutes to hours, so it is estimated from sampled cuts.
REPAIR_FULL = 20_000 * 1_000
#: The linearity table runs pydantic's re-parse up to this many chunks (quadratic beyond).
PEER_CHUNKS = 40_000
LINEAR = 2.2  # target: doubling the document costs at most this many times the time
VS_PEER = 0.1  # target: at the largest document in the most chunks, at most this x pydantic

TEMPLATE = """# Partial parsing of a streamed JSON document

Measured {when} on {machine}, {cpus} CPUs (shared, other jobs running: load average {load}
over the rounds), Python {python}, pydantic {pydantic}, pydantic-core {pydantic_core},
json-repair {json_repair}, by `{command}`.

`bench.py` streams one JSON document (a catalog of records with escapes, `\\n`, non-ASCII and
astral characters) in N equal chunks, and each approach produces the partial value after
**every** chunk, in one process and one run:

- **agentkit stream**: `PartialJSONParser.feed(chunk)`, which returns `current()` — the
  tokenizer keeps its state between chunks and the value tree is live (mutated in place as
  tokens complete), so each chunk costs its own length.
- **agentkit typed**: the pydantic flavour's `adapter.stream().feed(chunk)`, returning a
  `Catalog` built without validation (`model_construct`) after every chunk; closed
  sub-objects are reused and open lists grow in place, so a read rebuilds only the open spine.
- **pydantic from_json re-parse**: `pydantic_core.from_json(buffer, allow_partial=True)` on
  the whole buffer after each chunk.
- **pydantic TypeAdapter re-parse**: `TypeAdapter(Catalog).validate_json(buffer,
  experimental_allow_partial=True)` after each chunk (a ValidationError until the required
  fields have arrived counts as "no partial yet").
- **json-repair re-parse**: `json_repair.loads(buffer)` after each chunk. It is run in full
  where the document's size in bytes times the chunk count is at most {repair_full:,} (20 KB
  in 1,000 chunks); beyond that it would take minutes to hours, so the figure is an estimate
  (marked *est.*): 40 evenly spaced cuts timed, mean × chunk count.

Installed plugins cannot change these figures: `PartialJSONParser` is a pure function of what
it is fed, and the typed stream's flavour is chosen once, before the timing (with every plugin
installed, `adapt(Catalog)` picks the same pydantic flavour, rank 10, first); feeding calls no
hook.

{rounds} interleaved rounds: each round runs every approach once on every document, in an order
rotated from round to round. Each cell is the median over the rounds with the range in
brackets; a ratio (to pydantic's re-parse, or of a document to the one half its size) is taken
within its round.

{main_table}

Linearity — the same chunk size, the document doubled (pydantic's re-parse only up to
{peer_chunks:,} chunks):

{linear_table}

Targets: linear (doubling the document at the same chunk size at most {linear}x the time) —
{linear_verdict}; at most {vs_peer}x pydantic's re-parse at {big} — {peer_verdict}. The typed
stream, which hands back a `Catalog` after every chunk, is {typed_ratio:.3f}x of pydantic's
typed partial re-parse there.

The one place a read is not constant-time: a string still open is joined once per
`current()`, so a single enormous string value streamed in many chunks costs its length per
read while it is open.

Run it with:

```
bash benchmarks/partial_parse/setup.sh
{command}
```
"""


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


def timed(run: Callable[[list[str]], None], parts: list[str]) -> float:
    """Seconds for one pass over the chunks."""
    start = time.perf_counter()
    run(parts)
    return time.perf_counter() - start


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


def run_round(r: int, timers: dict[str, Callable[[], float]], into: dict[str, list[float]]) -> None:
    """Each timer once, in an order rotated by round ``r``; the seconds appended to ``into``."""
    names = list(timers)
    k = r % len(names)
    for name in names[k:] + names[:k]:
        into.setdefault(name, []).append(timers[name]())


def ms(values: list[float]) -> str:
    return spread([v * 1000 for v in values], ",.1f")


def per_round(a: list[float], b: list[float]) -> list[float]:
    """``a / b`` round by round."""
    return [x / y for x, y in zip(a, b, strict=True)]


def kb(text: str) -> str:
    return f"{len(text) // 1000} KB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    parser.add_argument("--chunks", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument(
        "--linearity-sizes",
        type=int,
        nargs="+",
        default=[20_000, 40_000, 80_000, 160_000],
        help="document sizes for the linearity table, each twice the one before",
    )
    parser.add_argument("--steps", type=int, nargs="+", default=[20, 2], help="chunk sizes (B)")
    args = parser.parse_args()
    if len(args.linearity_sizes) < 2:
        parser.error("--linearity-sizes needs at least two sizes")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())

    texts = {size: document(size) for size in {*args.sizes, *args.linearity_sizes}}
    cells = [(size, n) for size in args.sizes for n in args.chunks]
    split = {cell: chunks(texts[cell[0]], cell[1]) for cell in cells}
    lines = [(step, size) for step in args.steps for size in args.linearity_sizes]
    pieces = {
        (step, size): [texts[size][i : i + step] for i in range(0, len(texts[size]), step)]
        for step, size in lines
    }

    def main_timers(size: int, n: int) -> dict[str, Callable[[], float]]:
        parts = split[size, n]
        return {
            STREAM: lambda: timed(agentkit_stream, parts),
            TYPED_STREAM: lambda: timed(agentkit_typed, parts),
            PYDANTIC: lambda: timed(pydantic_raw, parts),
            PYDANTIC_TYPED: lambda: timed(pydantic_typed, parts),
            REPAIR: (lambda: timed(json_repair_raw, parts))
            if size * n <= REPAIR_FULL
            else (lambda: sampled(json_repair.loads, parts)),
        }

    def line_timers(parts: list[str]) -> dict[str, Callable[[], float]]:
        timers = {STREAM: lambda: timed(agentkit_stream, parts)}
        if len(parts) <= PEER_CHUNKS:
            timers[PYDANTIC] = lambda: timed(pydantic_raw, parts)
        return timers

    times: dict[tuple[int, int], dict[str, list[float]]] = {cell: {} for cell in cells}
    linear: dict[tuple[int, int], dict[str, list[float]]] = {line: {} for line in lines}
    loads: list[float] = []
    for r in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for cell in cells:
            run_round(r, main_timers(*cell), times[cell])
        for line in lines:
            run_round(r, line_timers(pieces[line]), linear[line])
        loads.append(os.getloadavg()[0])
        print(f"round {r + 1} of {args.rounds} done, load average {loads[-1]:.2f}", file=sys.stderr)

    big = (max(args.sizes), max(args.chunks))
    main_table = [
        f"| document | chunks | {STREAM} (ms) | {TYPED_STREAM} (ms) | {PYDANTIC} (ms) "
        f"| {PYDANTIC_TYPED} (ms) | {REPAIR} (ms) | agentkit / pydantic |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, n in cells:
        t = times[size, n]
        repair = ms(t[REPAIR]) if size * n <= REPAIR_FULL else f"~{ms(t[REPAIR])} (est.)"
        ratio = f"{spread(per_round(t[STREAM], t[PYDANTIC]), '.3f')}x"
        main_table.append(
            f"| {kb(texts[size])} | {n:,} | {ms(t[STREAM])} | {ms(t[TYPED_STREAM])} "
            f"| {ms(t[PYDANTIC])} | {ms(t[PYDANTIC_TYPED])} | {repair} "
            f"| {f'**{ratio}**' if (size, n) == big else ratio} |"
        )

    linear_table = [
        "| chunk size | document | agentkit (ms) | x of half "
        "| pydantic re-parse (ms) | x of half |",
        "|---|---|---:|---:|---:|---:|",
    ]
    growth: dict[str, list[float]] = {STREAM: [], PYDANTIC: []}  # medians, every doubling
    for step in args.steps:
        last: dict[str, list[float]] = {}
        for size in args.linearity_sizes:
            t = linear[step, size]
            cells_out = []
            for name in (STREAM, PYDANTIC):
                if name not in t:
                    cells_out += ["not run", ""]
                    continue
                if name in last:
                    doubled = per_round(t[name], last[name])
                    growth[name].append(statistics.median(doubled))
                    cells_out += [ms(t[name]), f"{spread(doubled)}x"]
                else:
                    cells_out += [ms(t[name]), ""]
            linear_table.append(f"| {step} B | {kb(texts[size])} | " + " | ".join(cells_out) + " |")
            last = t

    ours, theirs = times[big][STREAM], times[big][PYDANTIC]
    vs_peer = statistics.median(per_round(ours, theirs))
    worst = max(growth[STREAM])
    linear_verdict = (
        f"{'met' if worst <= LINEAR else 'MISSED'}, {min(growth[STREAM]):.2f}x–{worst:.2f}x"
    )
    if growth[PYDANTIC]:
        linear_verdict += (
            f", while pydantic's re-parse grows {min(growth[PYDANTIC]):.2f}x–"
            f"{max(growth[PYDANTIC]):.2f}x"
        )
    command = shlex.join([*RUN, *sys.argv[1:]])
    text = TEMPLATE.format(
        when=started,
        machine=platform.machine(),
        cpus=os.cpu_count(),
        load=f"{min(loads):.1f}–{max(loads):.1f}",
        python=platform.python_version(),
        pydantic=pydantic.VERSION,
        pydantic_core=pydantic_core.__version__,
        json_repair=version("json-repair"),
        command=command,
        repair_full=REPAIR_FULL,
        rounds=args.rounds,
        main_table="\n".join(main_table),
        peer_chunks=PEER_CHUNKS,
        linear_table="\n".join(linear_table),
        linear=LINEAR,
        linear_verdict=linear_verdict,
        vs_peer=VS_PEER,
        big=f"{kb(texts[big[0]])} in {big[1]:,} chunks",
        peer_verdict=(
            f"{'met' if vs_peer <= VS_PEER else 'MISSED'}, {vs_peer:.3f}x "
            f"({statistics.median(ours) * 1000:,.1f} ms against "
            f"{statistics.median(theirs) * 1000:,.1f} ms)"
        ),
        typed_ratio=statistics.median(
            per_round(times[big][TYPED_STREAM], times[big][PYDANTIC_TYPED])
        ),
    )
    (HERE / "RESULTS.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
