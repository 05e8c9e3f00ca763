"""``agentkit serve``: serve the kit's agent over a protocol a server plugin offers.

The agent is the one ``agentkit run`` builds (the same kit options), with a session store
holding one session per conversation. The protocol is looked up by name on the ``servers``
seam (``agentkit_register_servers``), so serve-agui and serve-a2a plug in the same way;
:func:`serve_asgi` runs a server plugin's ASGI app (each depends on uvicorn).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from .._errors import ConfigError
from ._run import add_agent_arguments
from ._run import check_file_plugin_options
from ._run import kit_options_from_args

if TYPE_CHECKING:
    import socket

#: The environment variable a bearer token may come from instead of ``--token``.
TOKEN_ENV = "AGENTKIT_SERVE_TOKEN"
#: The hosts a server may bind without a token: this machine only.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    serve = sub.add_parser(
        "serve",
        help="serve an agent over a protocol (agui, a2a: the installed server plugins)",
        description="Serve the agent agentkit run would build over a protocol a server plugin "
        "offers; each conversation is recorded as its own session in --store.",
    )
    serve.add_argument(
        "--protocol", required=True, metavar="NAME", help="the server plugin's name (agui, ...)"
    )
    serve.add_argument("--kit", metavar="FILE", help="the agentkit.toml to read the kit from")
    serve.add_argument("--host", default="127.0.0.1", help="the address to bind (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="the port (8000; 0 picks one)")
    serve.add_argument(
        "--store",
        default="memory://",
        metavar="URL",
        help="the session store each conversation is recorded in (memory://, sqlite:///x.db, "
        "postgresql://...); several servers on one store serve the same conversations",
    )
    serve.add_argument(
        "--token",
        help=f"a bearer token every request must carry (or ${TOKEN_ENV}); required to bind "
        "another address than this machine's",
    )
    serve.add_argument("--ui", action="store_true", help="also serve a chat page at /")
    add_agent_arguments(serve)
    serve.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_ENV) or None
    if token is None and args.host not in LOCAL_HOSTS:
        raise ConfigError(
            f"--host {args.host} lets other machines in: give a token (--token or "
            f"${TOKEN_ENV}) that every request must carry, or bind 127.0.0.1",
            value=args.host,
            source="--host",
        )
    serve = args.plugin_manager.lookup("servers", args.protocol).value
    options = kit_options_from_args(args)
    options["session"] = args.store
    given = {"token": token} if token else {}
    if args.ui:
        given["ui"] = True
    import asyncio  # here, not at the top: listing plugins builds this parser

    try:
        asyncio.run(_serve_kit(args, options, serve, given))
    except KeyboardInterrupt:
        return 0
    return 0


async def _serve_kit(
    args: argparse.Namespace, options: dict[str, Any], serve: Any, given: dict[str, Any]
) -> None:
    from .._kit import Kit

    try:
        opened = await Kit.open(**options)
    except TypeError:  # a plugin's factory refused an option of the file: name it, if so
        check_file_plugin_options(options, args.kit_source, returned=True)
        raise

    def ready(url: str) -> None:
        print(f"agentkit: serving {args.protocol} on {url}", file=sys.stderr, flush=True)

    async with opened as kit:
        await serve(kit, host=args.host, port=args.port, ready=ready, **given)


def _bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv4 or IPv6, as ``host`` resolves)."""
    import socket

    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ConfigError(
            f"cannot serve on host {host!r}: {exc.strerror or exc}; give a name or address "
            "of this machine (--host; 127.0.0.1 by default)",
            value=host,
            source="--host",
        ) from exc
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another port "
            "(--port; 0 picks a free one)",
            value=port,
            source="--port",
        ) from exc
    return sock


def _url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _shutting_down(now: bool) -> None:
    """Set sse-starlette's process-wide "shutting down" flag to this server's state.

    sse-starlette (under the mcp SDK's HTTP transport) ends every SSE stream of the process
    once that flag is set, or once the uvicorn server owning SIGTERM's handler is stopping;
    nothing clears either, so a server started after another one stopped (or caught Ctrl-C)
    ended every stream at once ("SSE stream ended without a response"). Its own guessing is
    turned off and the flag follows this server: clear while it serves, set as it stops.
    """
    sse = sys.modules.get("sse_starlette.sse")
    if sse is not None:
        sse.AppStatus.enable_automatic_graceful_drain = False
        sse.AppStatus.should_exit = now


async def serve_asgi(
    app: Any,
    host: str,
    port: int,
    ready: Callable[[str], None],
    *,
    lifespan: bool = False,
) -> None:
    """Serve the ASGI ``app`` under uvicorn until cancelled; ``ready(url)`` once it listens.

    For server plugins (which depend on uvicorn): the socket is bound first, so ``port`` 0
    picks a free port and ``ready`` is told the real one. What a page on another site could
    make a browser send (a cross-site request, a name rebound to this machine) is refused
    before ``app`` sees it (:class:`~agentkit_core.cli._browser_guard.BrowserGuard`).
    ``lifespan``: run the app's start-up and shutdown (an app that starts its own tasks
    there, as the mcp SDK's does).
    """
    import asyncio

    import uvicorn

    from ._browser_guard import BrowserGuard

    _shutting_down(False)
    sock = _bind(host, port)
    try:  # the socket is closed whatever ends this, ``ready`` raising included
        config = uvicorn.Config(
            BrowserGuard(app, host),
            log_level="warning",
            lifespan="on" if lifespan else "off",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        ready(_url_of(sock))
        running = asyncio.ensure_future(server.serve(sockets=[sock]))
        try:
            await asyncio.shield(running)
        finally:  # cancelled: let uvicorn close its connections before the kit closes
            _shutting_down(True)
            server.should_exit = True
            await asyncio.gather(running, return_exceptions=True)
    finally:
        sock.close()
