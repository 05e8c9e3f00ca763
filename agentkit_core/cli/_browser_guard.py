"""What a served agent refuses of a web browser: requests a page on another site forged.

A web page the user opens elsewhere can make their browser send requests to a server on
their machine. Two ways, both refused before the app sees the request:

* **Cross-site requests.** A form or a ``fetch`` with ``Content-Type: text/plain`` needs no
  CORS preflight, so without a check any site could start a run (and its tools) on a local
  agent, unseen. A browser names the page's origin in ``Origin``; a request whose origin is
  not this server's own is refused. Programs send no ``Origin``, and the page a server serves
  itself (``--ui``) is same-origin, so neither is touched.
* **DNS rebinding.** A site can point its own name at 127.0.0.1, which makes its page
  same-origin with a server listening there. A server bound to this machine only answers
  requests addressed to this machine by name (``localhost``, its loopback address); any other
  ``Host`` is refused.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import MutableMapping
from urllib.parse import urlsplit

Scope = MutableMapping[str, object]
Receive = Callable[[], Awaitable[MutableMapping[str, object]]]
Send = Callable[[MutableMapping[str, object]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The names of this machine a loopback-bound server answers to, besides the address it bound.
_LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def is_loopback(host: str) -> bool:
    """Whether a server bound to ``host`` listens on this machine only."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BrowserGuard:
    """An ASGI app around ``app`` that refuses cross-site and rebound requests with a 403.

    ``bound``: the host the server listens on; the ``Host`` check applies when it is a
    loopback one (a server open to other machines answers to names this cannot know).
    """

    def __init__(self, app: ASGIApp, bound: str) -> None:
        self.app = app
        self.names = _LOCAL_NAMES | {bound.lower().strip("[]")} if is_loopback(bound) else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            refusal = self.refusal(scope)
            if refusal is not None:
                await _refuse(scope, send, refusal)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> str | None:
        """Why the request is refused, or None to serve it."""
        given = scope.get("headers")
        headers = (
            {bytes(k).lower(): bytes(v) for k, v in given} if isinstance(given, Iterable) else {}
        )
        host = headers.get(b"host", b"").decode("latin-1")
        here = _address(str(scope.get("scheme", "http")), host) if host else None
        if self.names is not None and host and (here is None or here[0] not in self.names):
            return (
                f"a request addressed to {host!r} is refused: this server listens on this "
                "machine only and answers requests for localhost or its loopback address (a "
                "page elsewhere can point its own name here)"
            )
        origin = headers.get(b"origin")
        if origin is None:
            return None
        text = origin.decode("latin-1")
        parts = urlsplit(text)
        there = _address(parts.scheme, parts.netloc) if parts.scheme and parts.netloc else None
        if there is None or there != here:
            return (
                f"a request from the web page at {text!r} is refused: a page on another site "
                "may not drive this agent; call it from a program (which sends no Origin) or "
                "from a page this server serves"
            )
        return None


def _address(scheme: str, netloc: str) -> tuple[str, int] | None:
    """``netloc``'s host (lower case, no brackets) and port (the scheme's default if none)."""
    try:
        parts = urlsplit(f"//{netloc}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname.rstrip("."), port or _DEFAULT_PORTS.get(scheme.lower(), 0)


async def _refuse(scope: Scope, send: Send, refusal: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": refusal[:120]})
        return
    body = json.dumps({"error": refusal}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 403, "headers": headers})
    await send({"type": "http.response.body", "body": body})
