"""pydantic-ai's agent-loop turn (benchmarks/agent_loop), instrumented or not.

``BENCH_EXPORTER``: ``none`` (no instrumentation), ``otel`` (its ``Instrumentation``
capability on a batch processor and a no-op exporter, content excluded), ``otel-content``
(content included).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))

from bench_pydantic_ai import make
from common import main

KIND = os.environ.get("BENCH_EXPORTER", "none")


def capabilities() -> list[object]:
    if KIND == "none":
        return []
    from noop import noop_provider
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    settings = InstrumentationSettings(
        tracer_provider=noop_provider(), include_content=KIND == "otel-content"
    )
    return [Instrumentation(settings)]


if __name__ == "__main__":
    main(
        lambda kind: make(kind, capabilities=capabilities()),
        f"pydantic-ai exporter={KIND}",
        "pydantic-ai-slim",
    )
