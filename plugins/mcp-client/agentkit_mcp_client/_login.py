"""``login``: run the OAuth flow for a server now and store the grant (``agentkit mcp login``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from agentkit_core import ConfigError
from agentkit_core import ToolSourceError
from agentkit_core.plugin import mask_url

from ._auth import DEFAULT_USER
from ._auth import Authorize
from ._auth import HttpServer
from ._auth import LoginRequired
from ._auth import header_secrets
from ._auth import http_transport
from ._auth import masked
from ._connection import _leaf

if TYPE_CHECKING:
    from agentkit_core import PluginManager
    from agentkit_core.plugin import MCPTokenStore


async def login(
    url: str,
    *,
    user: str = DEFAULT_USER,
    store: str | MCPTokenStore | None = None,
    authorize: Authorize | None = None,
    scope: str | None = None,
    headers: Mapping[str, str] | None = None,
    manager: PluginManager | None = None,
) -> None:
    """Run the OAuth flow for ``url`` now and keep the grant under ``(url, user)`` in ``store``.

    ``authorize(url)`` is shown the authorization URL (default: print it). Any earlier grant
    for the key is forgotten first. A ``store`` URL is opened on ``manager`` (``agentkit mcp
    login`` passes the CLI's; None: this plugin's own ``file://`` and ``sqlite://`` stores).
    """
    import mcp

    server = HttpServer(
        url, dict(headers or {}), "oauth", store, user, scope, authorize or _print_url
    )
    try:
        async with mcp.Client(http_transport(server, fresh=True, manager=manager), cache=None):
            pass
    except Exception as exc:
        leaf = _leaf(exc)
        if isinstance(leaf, (LoginRequired, ConfigError)):
            raise leaf from exc
        shown = masked(str(leaf) or type(leaf).__name__, header_secrets(server))
        raise ToolSourceError(
            f"logging in to {mask_url(url)} as {user!r} failed: {shown}; check the URL and "
            "that the server offers OAuth"
        ) from exc


def _print_url(url: str) -> None:
    print(f"Open this URL in a browser to authorize agentkit:\n\n  {url}\n", flush=True)
