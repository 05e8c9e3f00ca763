"""agentkit-tracing-otel: every agentkit run as OpenTelemetry spans (GenAI semantic conventions).

Registered as the span exporter ``"otel"``. It is active when OpenTelemetry is configured: an
application that set a tracer provider of its own, or any of the standard ``OTEL_*`` variables
naming where to send spans (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``..._TRACES_ENDPOINT``,
``OTEL_TRACES_EXPORTER``). Prompts, tool arguments and results are recorded only with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``, and never for a secret-tainted run.
The OpenTelemetry SDK is imported on first use, not when the plugin loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import agentkit_core

if TYPE_CHECKING:
    from agentkit_core.plugin import Register
    from agentkit_core.plugin import SpanExporterFactory

    from ._exporter import OTelExporter

__all__ = ["OTelExporter", "agentkit_register_span_exporters", "from_environment"]


def from_environment() -> OTelExporter | None:
    """The exporter the ``OTEL_*`` environment asks for, or None when OpenTelemetry is off.

    Off for certain (no tracer provider set, no variable asking for export), it returns None
    without importing OpenTelemetry: a run with no tracing configured does not pay for it.
    """
    from ._environment import may_be_configured

    if not may_be_configured():
        return None
    from ._exporter import from_environment as build

    return build()


@agentkit_core.hookimpl
def agentkit_register_span_exporters(register: Register[SpanExporterFactory]) -> None:
    """Offer ``"otel"``: built from the environment, None while OpenTelemetry is off."""
    register("otel", from_environment)


def __getattr__(name: str) -> Any:
    if name == "OTelExporter":
        from ._exporter import OTelExporter

        return OTelExporter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
