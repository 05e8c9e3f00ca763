"""Run an ASGI application under uvicorn on a socket bound first, so port 0 can be told."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv4 or IPv6, as ``host`` resolves)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(128)
    sock.setblocking(False)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve_app(app: Any, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve ``app`` until cancelled; ``ready(url)`` once the socket listens."""
    import uvicorn

    sock = bind(host, port)
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    ready(url_of(sock))
    running = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(running)
    finally:  # cancelled: let uvicorn close its connections before the kit closes
        server.should_exit = True
        await asyncio.gather(running, return_exceptions=True)
        sock.close()
