"""The A2A server: the agent card built from the kit, and JSON-RPC over the SDK's handler.

message/send, message/stream, tasks/get and tasks/cancel are the SDK's request handler's; the
agent is :class:`~agentkit_serve_a2a._executor.KitExecutor`; the tasks are kept in the kit's
session store (:class:`~agentkit_serve_a2a._tasks.SessionTaskStore`), shared by every process
on it.
"""

from __future__ import annotations

import hmac
import logging
import warnings
from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes
from a2a.server.routes import create_jsonrpc_routes
from a2a.types import AgentCapabilities
from a2a.types import AgentCard
from a2a.types import AgentInterface
from a2a.types import AgentSkill
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response

from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Sessions

from ._executor import KitExecutor
from ._tasks import SessionTaskStore

#: Where the JSON-RPC endpoint is, under the server's URL.
RPC = "/"
#: The largest request body taken, in bytes.
MAX_BODY = 1 << 20


def agent_card(kit: Kit, url: str) -> AgentCard:
    """The card: the kit's name and description; a skill for the conversation, one per tool."""
    config = kit.config()
    conversation = AgentSkill(
        id="conversation",
        name=config.name,
        description=config.description or "answers a message, using its tools",
        tags=["conversation"],
    )
    tools = [
        AgentSkill(
            id=tool.name,
            name=tool.name,
            description=f"the tool {tool.name} ({tool.source})",
            tags=["tool", tool.source],
        )
        for tool in kit.tools()
    ]
    return AgentCard(
        name=config.name,
        description=config.description or f"the agentkit agent {config.name!r}",
        version="1.0",
        supported_interfaces=[
            AgentInterface(url=url + RPC, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[conversation, *tools],
    )


def sessions_of(kit: Kit) -> Sessions:
    """``kit``'s session store, where the server keeps its tasks; a ConfigError without one."""
    if kit.sessions is None:
        raise ConfigError(
            "the A2A server keeps its tasks in the kit's session store: open the kit with "
            "Kit.open(session=URL) (agentkit serve --store URL)",
            source="a2a_app",
        )
    return kit.sessions


def a2a_app(kit: Kit, url: str, *, token: str | None = None, max_body: int = MAX_BODY) -> Any:
    """The A2A server over ``kit`` (opened, with a session store), as an ASGI app at ``url``."""
    card = agent_card(kit, url)
    sessions = sessions_of(kit)
    # No event stream across processes (a task's events stream from the process running it),
    # which the SDK warns of, as a warning and a log line, for every handler built.
    said = logging.getLogger(DefaultRequestHandler.__module__)
    quiet = logging.Filter("-")  # a name no logger has: lets no record through
    said.addFilter(quiet)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "A VersionedTaskStore was configured without")
            handler = DefaultRequestHandler(
                agent_executor=KitExecutor(kit),
                task_store=SessionTaskStore(sessions),
                agent_card=card,
            )
    finally:
        said.removeFilter(quiet)
    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, RPC, enable_v0_3_compat=True),
        ]
    )
    return Guarded(app, token, max_body)


class Guarded:
    """The app behind a bearer token (when given) and a bound on the request body.

    The bound counts the bytes received, so a chunked body (no content-length) or one whose
    content-length understates it is refused too; a body within it is handed on whole.
    """

    def __init__(self, app: Any, token: str | None, max_body: int) -> None:
        self.app, self.token, self.max_body = app, token, max_body

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refused(Request(scope))
        if refused is not None:
            await refused(scope, receive, send)
            return
        body = await self.read(receive)
        if body is None:  # the client left before its body ended
            return
        if len(body) > self.max_body:
            await self.too_large()(scope, receive, send)
            return
        if body.count(b"[") + body.count(b"{") > NESTING and nested_too_deeply(body):
            await JSONResponse(TOO_DEEP)(scope, receive, send)
            return
        await self.app(scope, replay(body, receive), send)

    def refused(self, request: Request) -> Response | None:
        is_card = request.url.path.startswith("/.well-known/")
        if self.token is not None and not is_card:
            given = request.headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                return JSONResponse(
                    {"error": "this server needs 'Authorization: Bearer <token>'"}, 401
                )
        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > self.max_body:
            return self.too_large()
        return None

    async def read(self, receive: Any) -> bytes | None:
        """The body, read until its end or until it passes the bound; None if the client left."""
        chunks: list[bytes] = []
        size = 0
        while size <= self.max_body:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    def too_large(self) -> Response:
        return JSONResponse({"error": f"the request body is over {self.max_body} bytes"}, 413)


#: Past this many brackets a body may be nested deeper than the JSON decoder goes.
NESTING = 900
#: JSON-RPC's parse error for such a body: the SDK told it as an internal error (-32603).
TOO_DEEP = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32700, "message": "the request body is nested too deeply to decode"},
}


def nested_too_deeply(body: bytes) -> bool:
    """Whether decoding ``body`` runs past the decoder's depth (other faults: the SDK's to tell).

    Read only for a body with more brackets than :data:`NESTING`, so an ordinary request is
    not decoded twice.
    """
    import json

    try:
        json.loads(body)
    except RecursionError:
        return True
    except ValueError:
        return False
    return False


def replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that gives ``body`` whole, then whatever the client sends next."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Any:
        return pending.pop() if pending else await receive()

    return replayed


class Deferred:
    """The app, built once the server's URL is known (the card names it)."""

    def __init__(self, kit: Kit, token: str | None) -> None:
        self.kit, self.token = kit, token
        self.app: Any = None

    def build(self, url: str) -> None:
        self.app = a2a_app(self.kit, url, token=self.token)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
