"""agentkit-serve-agui: a kit as an AG-UI endpoint over SSE (``agentkit serve --protocol agui``).

Each AG-UI thread is a session of the kit's store (thread id = session id): its own recorder,
transcript and skill grants, so threads run side by side and never see each other's. A run's
events map one to one onto AG-UI's (``_mapping``); an approval is an AG-UI interrupt the client
answers with ``resume`` on the thread. The web stack (starlette, uvicorn, ag-ui-protocol) is
imported when a server is built, not when the plugin loads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from agentkit_core import Kit
    from agentkit_core.plugin import Register
    from agentkit_core.plugin import ServerFactory

    from ._app import agui_app

__all__ = ["agentkit_register_servers", "agui_app", "serve"]


async def serve(
    kit: Kit,
    *,
    host: str,
    port: int,
    ready: Callable[[str], None],
    token: str | None = None,
    ui: bool = False,
) -> None:
    """Serve ``kit`` over AG-UI on ``host:port`` (0 picks a port) until cancelled."""
    from agentkit_core.cli import serve_asgi

    from ._app import agui_app

    await serve_asgi(agui_app(kit, token=token, ui=ui), host, port, ready)


def __getattr__(name: str) -> Any:
    if name == "agui_app":
        from ._app import agui_app

        return agui_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def agentkit_register_servers(register: Register[ServerFactory]) -> None:
    """Offer the ``agui`` server (``agentkit serve --protocol agui``)."""
    register("agui", serve)
