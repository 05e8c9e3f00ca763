"""What turns OpenTelemetry on, read without importing it (the first run stays light)."""

from __future__ import annotations

import os
import sys

#: Variables any of which turns export on when the application set no tracer provider.
ENDPOINT_ENVS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
)

#: OpenTelemetry's own variable naming a tracer provider to build on first use.
PROVIDER_ENV = "OTEL_PYTHON_TRACER_PROVIDER"


def may_be_configured() -> bool:
    """Whether OpenTelemetry could be on: False means it is off, and it was not imported.

    An application that set a tracer provider imported ``opentelemetry.trace`` to do it;
    otherwise only the environment can turn export on.
    """
    if "opentelemetry.trace" in sys.modules:
        return True
    return any(os.environ.get(name, "").strip() for name in (*ENDPOINT_ENVS, PROVIDER_ENV))
