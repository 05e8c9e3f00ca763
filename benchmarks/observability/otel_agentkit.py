"""agentkit's agent-loop turn (benchmarks/agent_loop) with span exporters attached or not.

``BENCH_EXPORTER``: ``none`` (no exporter), ``otel`` (the tracing-otel plugin on a batch
processor and a no-op exporter), ``otel-content`` (the same, recording content),
``otel-sampled-out`` (the same under ``ParentBased(TraceIdRatioBased(0))``: every run dropped by
the sampler, what an untraced run pays), ``file`` (a trace file on /dev/null).
``BENCH_HOOKS``: ``installed`` (every installed plugin's hooks, an Agent's default) or ``core``
(``hooks=Hooks()``, the default).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agent_loop"))

from bench_agentkit import make
from common import main

from agentkit_core.cli import TraceFile

KIND = os.environ.get("BENCH_EXPORTER", "none")
#: ``hooks=None`` takes every installed plugin's hooks; ``make`` passes ``Hooks()`` otherwise.
HOOKS: dict[str, Any] = {"hooks": None} if os.environ.get("BENCH_HOOKS") == "installed" else {}


def exporters() -> list[Any]:
    if KIND == "none":
        return []
    if KIND == "file":
        return [TraceFile(os.devnull)]
    from agentkit_tracing_otel import OTelExporter
    from noop import noop_provider

    sampler = None
    if KIND == "otel-sampled-out":
        from opentelemetry.sdk.trace.sampling import ParentBased
        from opentelemetry.sdk.trace.sampling import TraceIdRatioBased

        sampler = ParentBased(TraceIdRatioBased(0.0))
    return [OTelExporter(noop_provider(sampler), capture_content=KIND == "otel-content")]


if __name__ == "__main__":
    main(
        lambda kind: make(kind, exporters=exporters(), **HOOKS),
        f"agentkit exporter={KIND}",
        "agentkit-core",
    )
