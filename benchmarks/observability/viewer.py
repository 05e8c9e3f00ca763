"""The run viewer on long runs: HTML rendering time per turn as runs grow to 1,000 turns and
past, and Chromium's time to first paint of the page with every turn present.

Each run is real: an agent on a scripted model calling one tool per turn, traced to a trace file
(the file ``agentkit run --trace`` writes). Rendering is ``agentkit view``'s work: read the
file, build the run view, write the page. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentkit_core import Agent  # noqa: E402
from agentkit_core import Hooks  # noqa: E402
from agentkit_core import Message  # noqa: E402
from agentkit_core import ToolCall  # noqa: E402
from agentkit_core.cli import TraceFile  # noqa: E402
from agentkit_core.cli import read_trace_file  # noqa: E402
from agentkit_core.cli._viewer import render_html  # noqa: E402
from agentkit_core.cli._viewer import views_from_spans  # noqa: E402
from agentkit_core.testing import ScriptedModel  # noqa: E402

SIZES = (100, 300, 1000, 3000)


def lookup(name: str) -> str:
    """Look a name up."""
    return f"record of {name}: " + "details " * 20


def trace_of(turns: int, path: Path) -> Path:
    script: list[Any] = [
        Message.assistant("", [ToolCall(f"c{i}", "lookup", json.dumps({"name": f"n{i}"}))])
        for i in range(turns - 1)
    ]
    with TraceFile(path) as exporter:
        agent = Agent(
            "long",
            ScriptedModel([*script, "done"]),
            tools=[lookup],
            hooks=Hooks(),
            exporters=[exporter],
            max_turns=turns,
        )
        asyncio.run(agent.run("go"))
    return path


def render(trace: Path, out: Path) -> float:
    t0 = time.perf_counter()
    page = render_html(views_from_spans(read_trace_file(trace)), trace.stem)
    out.write_text(page, encoding="utf-8")
    return time.perf_counter() - t0


def first_paint(page: Path, turns: int) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "tests"))
    from chromium import Browser

    with Browser() as browser:
        t0 = time.perf_counter()
        browser.open(page)
        loaded = time.perf_counter() - t0
        present = browser.js("document.querySelectorAll('section.turn').length")
        assert present == turns, (present, turns)
        paint = browser.js(
            "(performance.getEntriesByName('first-contentful-paint')[0] ||"
            " performance.getEntriesByName('first-paint')[0] || {}).startTime"
        )
        return {"first_paint_ms": float(paint or 0), "load_event_ms": loaded * 1000}


def main() -> None:
    results: dict[str, Any] = {"sizes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for turns in SIZES:
            trace = trace_of(turns, Path(tmp) / f"run{turns}.jsonl")
            page = Path(tmp) / f"run{turns}.html"
            times = [render(trace, page) for _ in range(5)]
            best = min(times)
            results["sizes"][turns] = {
                "render_ms": best * 1000,
                "median_ms": statistics.median(times) * 1000,
                "us_per_turn": best / turns * 1e6,
                "page_kib": page.stat().st_size / 1024,
                "trace_kib": trace.stat().st_size / 1024,
            }
            if turns == 1000:
                paints = [first_paint(page, turns) for _ in range(3)]
                results["chromium_1000"] = {
                    k: statistics.median(p[k] for p in paints) for k in paints[0]
                }
    per_turn = [v["us_per_turn"] for v in results["sizes"].values()]
    results["per_turn_growth_100_to_3000"] = per_turn[-1] / per_turn[0]
    print(json.dumps(results))


if __name__ == "__main__":
    main()
