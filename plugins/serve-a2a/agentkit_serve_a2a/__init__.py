"""agentkit-serve-a2a: a kit as an A2A agent (``agentkit serve --protocol a2a``).

The A2A context id is the session id: each context is its own session of the kit's store, so
contexts run side by side and never see each other's transcript or grants. The agent card is
built from the kit; ``message/send``, ``message/stream``, ``tasks/get`` and ``tasks/cancel``
are the SDK's; an approval is an ``input-required`` task the client answers. The a2a SDK and
the web stack are imported when a server is built, not when the plugin loads.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import hookimpl

if TYPE_CHECKING:
    from agentkit_core import Kit
    from agentkit_core.plugin import Register
    from agentkit_core.plugin import ServerFactory

    from ._app import a2a_app

__all__ = ["a2a_app", "agentkit_register_servers", "serve"]

#: The a2a-sdk's switch for its OpenTelemetry spans, read once, when the SDK is imported.
SDK_TRACING = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"
#: What could give OpenTelemetry somewhere to send spans (as agentkit-tracing-otel reads it).
OTEL_ENVS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
    "OTEL_PYTHON_TRACER_PROVIDER",
)


def quiet_sdk_tracing() -> None:
    """Turn the SDK's spans off before it is imported, unless OpenTelemetry may be configured.

    With no tracer provider its spans go nowhere, yet making them took a quarter to a third of the
    server's CPU time per streamed request. An application that set a provider imported
    ``opentelemetry.trace``; otherwise only the environment can; and the variable, when set,
    is the user's choice.
    """
    if "opentelemetry.trace" in sys.modules or any(os.environ.get(n) for n in OTEL_ENVS):
        return
    os.environ.setdefault(SDK_TRACING, "false")


async def serve(
    kit: Kit,
    *,
    host: str,
    port: int,
    ready: Callable[[str], None],
    token: str | None = None,
    ui: bool = False,
) -> None:
    """Serve ``kit`` as an A2A agent on ``host:port`` (0 picks a port) until cancelled."""
    if ui:
        raise ConfigError("--ui is AG-UI's chat page: serve --protocol agui --ui", source="--ui")
    from agentkit_core.cli import serve_asgi

    quiet_sdk_tracing()
    from ._app import Deferred
    from ._app import sessions_of

    sessions_of(kit)  # refused before it listens, not after ready named a URL
    app = Deferred(kit, token)

    def listening(url: str) -> None:
        app.build(url)
        ready(url)

    await serve_asgi(app, host, port, listening)


def __getattr__(name: str) -> Any:
    if name == "a2a_app":
        quiet_sdk_tracing()
        from ._app import a2a_app

        return a2a_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def agentkit_register_servers(register: Register[ServerFactory]) -> None:
    """Offer the ``a2a`` server (``agentkit serve --protocol a2a``)."""
    register("a2a", serve)
