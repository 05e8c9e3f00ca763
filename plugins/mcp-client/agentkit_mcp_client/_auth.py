"""Authenticated HTTP servers: per-server headers and OAuth 2.1 through the SDK's client auth.

A server given as a mapping with a ``url`` (``{"url": ..., "headers": {...}, "auth": "oauth",
"token_store": ..., "user": ...}``) becomes an :class:`HttpServer`. Header values may name
environment variables as ``${VAR}``, read when the connection opens; no header value is ever
shown (reprs and errors print ``***``, and an error text holding one has it replaced).

``auth="oauth"`` puts the SDK's ``OAuthClientProvider`` (authorization code with PKCE,
refresh, dynamic client registration when the server offers it) on the connection, with the
grant kept in an ``MCPTokenStore`` under (server URL, user), so a restart reuses it. Without
an ``authorize`` callable the connection never asks a person: no grant, or one the server no
longer takes, is a :class:`LoginRequired` error naming the ``agentkit mcp login`` command to
run. With one (``agentkit mcp login``, or a program that can show a URL), the flow runs: the
callable gets the authorization URL and a listener on 127.0.0.1 receives the code.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import os
import re
import time
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

from agentkit_core import ConfigError
from agentkit_core import ToolSourceError
from agentkit_core.plugin import mask_url

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull
    from mcp.shared.auth import OAuthToken

    from agentkit_core import PluginManager
    from agentkit_core.plugin import MCPTokenStore

#: The environment variable naming the default token store, and the default itself.
TOKEN_STORE_ENV = "AGENTKIT_MCP_TOKEN_STORE"
DEFAULT_USER = "default"
#: How a revoked grant showed when its refresh was refused.
REFRESH_REFUSED = "the authorization server answered a refresh with invalid_grant"
#: How long an interactive login waits for the browser to come back.
LOGIN_TIMEOUT = 300.0
MASK = "***"

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KEYS = {
    "url",
    "headers",
    "auth",
    "token_store",
    "user",
    "scope",
    "authorize",
    "client_id",
    "client_secret",
    "client_metadata_url",
}

#: ``authorize(url)``: show the authorization URL to whoever can open it (may be async).
Authorize = Callable[[str], Awaitable[None] | None]


class LoginRequired(ToolSourceError):
    """The server needs an OAuth grant this connection may not ask a person for."""


class GrantRevoked(LoginRequired):
    """The stored OAuth grant was revoked (and removed from the token store)."""


def default_token_store() -> str:
    """``$AGENTKIT_MCP_TOKEN_STORE``, else ``file://~/.agentkit/mcp-tokens`` (expanded)."""
    return os.environ.get(TOKEN_STORE_ENV) or "file://" + os.path.expanduser(
        "~/.agentkit/mcp-tokens"
    )


@dataclass(frozen=True)
class HttpServer:
    """A streamable HTTP server with headers and/or OAuth; reprs show no header value."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    auth: str | None = None
    token_store: str | MCPTokenStore | None = None
    user: str = DEFAULT_USER
    scope: str | None = None
    authorize: Authorize | None = None
    #: A client registered with the authorization server beforehand (the secret may be
    #: ``${VAR}``); without one the client registers itself where the server offers it.
    client_id: str | None = None
    client_secret: str | None = None
    #: An https URL of this client's metadata document, used as its id where the server
    #: supports that (SEP-991) instead of registering.
    client_metadata_url: str | None = None

    def __repr__(self) -> str:
        shown = {name: MASK for name in self.headers}
        return (
            f"HttpServer({mask_url(self.url)!r}, headers={shown}, auth={self.auth!r}, "
            f"user={self.user!r})"
        )

    @property
    def store_url(self) -> str:
        store = self.token_store
        if store is None:
            return default_token_store()
        return store if isinstance(store, str) else str(getattr(store, "url", store))

    def login_command(self) -> str:
        store = mask_url(self.store_url)
        return f"agentkit mcp login {mask_url(self.url)} --user {self.user} --store {store}"


def http_server(spec: Mapping[str, Any]) -> HttpServer:
    """The :class:`HttpServer` a mapping with ``url`` describes; a bad key is a ConfigError."""
    url = spec.get("url")
    where = f"MCP server {mask_url(str(url))!r}"
    unknown = sorted(set(spec) - _KEYS)
    if unknown or not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"{where}: an HTTP server mapping needs 'url' (http:// or https://) and may have "
            f"{', '.join(sorted(_KEYS - {'url'}))}; got keys {sorted(spec)}",
            value=sorted(spec),
            source="mcp server",
        )
    headers = spec.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise ConfigError(
            f"{where}: 'headers' must map header names to strings (use '${{VAR}}' for a value "
            "from the environment)",
            value=MASK,
            source="mcp server headers",
        )
    auth = spec.get("auth")
    if auth not in (None, "oauth"):
        raise ConfigError(
            f"{where}: auth={auth!r} is not known; use auth='oauth' or leave it out",
            value=auth,
            source="mcp server auth",
        )
    user = spec.get("user", DEFAULT_USER)
    if not isinstance(user, str) or not user:
        raise ConfigError(
            f"{where}: 'user' must be a non-empty string (whose grant to use); got {user!r}",
            value=user,
            source="mcp server user",
        )
    return HttpServer(
        url,
        dict(headers),
        auth,
        spec.get("token_store"),
        user,
        spec.get("scope"),
        spec.get("authorize"),
        spec.get("client_id"),
        spec.get("client_secret"),
        spec.get("client_metadata_url"),
    )


def resolve_headers(server: HttpServer, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The headers with each ``${VAR}`` replaced from the environment; a missing one raises."""
    return {
        name: expand(value, server.url, f"header {name!r}", environ)
        for name, value in server.headers.items()
    }


def expand(value: str, url: str, what: str, environ: Mapping[str, str] | None = None) -> str:
    """``value`` with each ``${VAR}`` replaced; an unset one is a ConfigError naming ``what``."""
    env = os.environ if environ is None else environ

    def lookup(found: re.Match[str]) -> str:
        var = found.group(1)
        if var not in env:
            raise ConfigError(
                f"MCP server {mask_url(url)!r}: {what} takes its value from ${{{var}}}, which "
                f"is not set; export {var} before connecting",
                value=f"${{{var}}}",
                source=f"mcp server {what}",
            )
        return env[var]

    return _REF.sub(lookup, value)


def masked(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (longest first) replaced by ``***``."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def header_secrets(server: HttpServer) -> list[str]:
    """What no message may show: the header values and client secret as sent.

    Each whitespace-separated part too (the token after ``Bearer``); with a variable unset,
    what is written around its reference.
    """
    secret = [server.client_secret] if server.client_secret else []
    written = [*server.headers.values(), *secret]
    values: list[str] = []
    for value in written:
        try:
            values.append(expand(value, server.url, "a secret"))
        except ConfigError:
            values.extend(_REF.split(value)[::2])
    return [*values, *(part for v in values for part in v.split() if len(part) >= 8)]


# --------------------------------------------------------------------------- the transport


@contextlib.asynccontextmanager
async def http_transport(
    server: HttpServer,
    watch: Any = None,
    *,
    fresh: bool = False,
    manager: PluginManager | None = None,
) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport, with the server's headers and OAuth provider.

    A 401 or 403 answer is noted in ``watch.refused`` (the SDK reports it only as an
    internal error). ``fresh`` forgets the stored grant first (a login asks again).
    ``manager`` opens a token store named by URL (see :func:`open_token_store`).
    """
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = resolve_headers(server)
    async with contextlib.AsyncExitStack() as stack:
        auth = None
        if server.auth == "oauth":
            auth = await _oauth(server, stack, fresh=fresh, manager=manager)
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=headers,
                auth=auth,
                timeout=httpx2.Timeout(30.0, read=300.0),
                event_hooks={"response": [functools.partial(_note_refusal, watch)]},
            )
        )
        streams = await stack.enter_async_context(
            streamable_http_client(server.url, http_client=http)
        )
        yield streams


async def _note_refusal(watch: Any, response: Any) -> None:
    if watch is not None and response.status_code in (401, 403):
        watch.refused = f"HTTP {response.status_code} {response.reason_phrase}".strip()


async def open_token_store(url: str, manager: PluginManager | None) -> MCPTokenStore:
    """The token store ``url`` names, opened by its scheme's plugin on ``manager``.

    ``manager`` is whoever built the connection's (a kit passes its own to the source it
    builds, the CLI its own). Without one (a source or login built by hand) only this plugin's
    own ``file://`` and ``sqlite://`` stores open, never through the process-wide manager.
    """
    if manager is not None:
        from agentkit_core.plugin import open_mcp_token_store

        return await open_mcp_token_store(url, manager=manager)
    from ._tokens import open_url

    opened = open_url(url)
    return await opened if inspect.isawaitable(opened) else opened


async def _oauth(
    server: HttpServer,
    stack: contextlib.AsyncExitStack,
    *,
    fresh: bool,
    manager: PluginManager | None,
) -> Any:
    from mcp.shared.auth import OAuthClientMetadata

    store = server.token_store
    if store is None or isinstance(store, str):
        store = await open_token_store(server.store_url, manager)
        stack.push_async_callback(store.aclose)
    grants = _GrantStorage(store, server.url, server.user)
    grants.configured = _configured_client(server)
    if fresh:
        await store.delete(server.url, server.user)
    listener = None
    if server.authorize is not None:
        listener = await stack.enter_async_context(_RedirectListener.open())
        grants.redirect_uri, grants.interactive = listener.redirect_uri, True
    elif await store.get(server.url, server.user) is None:
        raise LoginRequired(
            f"no OAuth grant for user {server.user!r} in the token store "
            f"{mask_url(server.store_url)!r}; log in once: {server.login_command()}"
        )
    metadata = OAuthClientMetadata(
        client_name="agentkit",
        redirect_uris=[grants.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=server.scope,
    )

    async def redirect(url: str) -> None:
        if server.authorize is None:
            raise await _refused_grant(server, store, provider.revoked)
        assert listener is not None  # authorize is set, so the listener is open
        listener.arm()
        shown = server.authorize(url)
        if inspect.isawaitable(shown):
            await shown

    async def callback() -> Any:
        assert listener is not None  # authorize is set whenever redirect returned
        return await listener.result(LOGIN_TIMEOUT)

    provider = _provider_class()(
        server.url, metadata, grants, redirect, callback, server.client_metadata_url
    )
    return provider


async def _refused_grant(server: HttpServer, store: MCPTokenStore, revoked: str | None) -> Any:
    """The error for a stored grant the servers refused; a revoked one leaves the store.

    Only that (server, user) key goes: the other servers' and users' grants stay.
    """
    if revoked is None:
        return LoginRequired(
            f"the server refused the stored OAuth grant for user "
            f"{server.user!r} (expired or for other scopes) and no refresh was "
            f"possible; log in again: {server.login_command()}"
        )
    await store.delete(server.url, server.user)
    return GrantRevoked(
        f"the server refused the stored OAuth grant for user {server.user!r}: it was "
        f"revoked ({revoked}), so it is removed from the token store "
        f"{mask_url(server.store_url)!r}; log in again: {server.login_command()}"
    )


def _configured_client(server: HttpServer) -> OAuthClientInformationFull | None:
    """The pre-registered client of the configuration, its secret read from the environment."""
    from mcp.shared.auth import OAuthClientInformationFull

    if server.client_id is None:
        return None
    secret = server.client_secret
    if secret is not None:
        secret = expand(secret, server.url, "client_secret")
    return OAuthClientInformationFull(
        client_id=server.client_id,
        client_secret=secret,
        redirect_uris=None,
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
    )


class _GrantStorage:
    """The SDK's ``TokenStorage`` over one key of an ``MCPTokenStore``.

    A grant is ``{"tokens": OAuthToken, "client": OAuthClientInformationFull, "expires_at":
    unix time}``, as JSON. A registered client whose redirect URIs lack this login's
    listener is not offered (the server would refuse the redirect), so the flow registers anew.
    """

    def __init__(self, store: MCPTokenStore, server: str, user: str) -> None:
        self.store = store
        self.server = server
        self.user = user
        #: Where the authorization server sends the browser back (only used interactively).
        self.redirect_uri = "http://127.0.0.1/callback"
        self.interactive = False
        self.configured: OAuthClientInformationFull | None = None

    async def _grant(self) -> dict[str, Any]:
        return await self.store.get(self.server, self.user) or {}

    async def _update(self, **parts: Any) -> None:
        await self.store.put(self.server, self.user, {**(await self._grant()), **parts})

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        tokens = (await self._grant()).get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + float(tokens.expires_in) if tokens.expires_in else None
        dumped = tokens.model_dump(mode="json", exclude_none=True)
        await self._update(tokens=dumped, expires_at=expires_at)

    async def expires_at(self) -> float | None:
        found = (await self._grant()).get("expires_at")
        return float(found) if isinstance(found, (int, float)) else None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        if self.configured is not None:
            return self.configured
        client = (await self._grant()).get("client")
        if not client:
            return None
        info = OAuthClientInformationFull.model_validate(client)
        uris = [str(u) for u in info.redirect_uris or ()]
        return None if self.interactive and self.redirect_uri not in uris else info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._update(client=client_info.model_dump(mode="json", exclude_none=True))


@functools.cache
def _provider_class() -> type:
    from mcp.client.auth import OAuthClientProvider

    class Provider(OAuthClientProvider):
        """The SDK's provider; it restores expiry, refreshes a rejected token, notes revocation.

        The SDK loads stored tokens but not when they expire, so an expired token would be
        sent (and refused) instead of refreshed; the grant keeps ``expires_at`` for this.
        The grant is revoked (``revoked`` says how it showed) when a refresh is answered
        ``invalid_grant``, or when the server answers ``invalid_token`` to the token sent
        and there is no refresh token to try.
        """

        revoked: str | None = None

        async def _initialize(self) -> None:
            await super()._initialize()
            storage = self.context.storage
            if isinstance(storage, _GrantStorage):
                self.context.token_expiry_time = await storage.expires_at()

        async def _handle_refresh_response(self, response: Any) -> bool:
            if response.status_code in (400, 401):
                await response.aread()
                with contextlib.suppress(ValueError, AttributeError):
                    if response.json().get("error") == "invalid_grant":
                        self.revoked = REFRESH_REFUSED
            ok: bool = await super()._handle_refresh_response(response)
            return ok

        async def _auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
            """The SDK's flow, with one refresh when the server rejects the token sent."""
            from mcp.client.auth.utils import extract_field_from_www_auth

            flow = super()._auth_flow(request)
            answer: Any = None
            retried = False
            try:
                while True:
                    try:
                        sent = await flow.asend(answer)
                    except StopAsyncIteration:
                        return
                    answer = yield sent
                    rejected = (
                        sent is request
                        and not retried
                        and answer.status_code == 401
                        and "authorization" in request.headers
                        and extract_field_from_www_auth(answer, "error") == "invalid_token"
                    )
                    if not rejected:
                        continue
                    retried = True
                    if not self.context.can_refresh_token():
                        self.revoked = "the server rejected the token as invalid_token"
                        continue
                    refreshed = yield await self._refresh_token()
                    if await self._handle_refresh_response(refreshed):
                        self._add_auth_header(request)
                        answer = yield request
            finally:
                await flow.aclose()

    return Provider


class _RedirectListener:
    """An HTTP listener on 127.0.0.1 that receives authorization responses.

    Each authorization (a login, a scope step-up later on the same connection) arms it for
    one answer.
    """

    def __init__(self) -> None:
        self._result: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None
        self.redirect_uri = ""

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, port: int = 0) -> AsyncIterator[_RedirectListener]:
        listener = cls()
        listener._server = await asyncio.start_server(listener._serve, "127.0.0.1", port)
        bound = listener._server.sockets[0].getsockname()[1]
        listener.redirect_uri = f"http://127.0.0.1:{bound}/callback"
        try:
            yield listener
        finally:
            listener._server.close()
            await listener._server.wait_closed()

    def arm(self) -> None:
        """Wait for a new answer (the authorization URL is about to be shown)."""
        if self._result.done():
            self._result = asyncio.get_running_loop().create_future()

    async def result(self, timeout: float) -> Any:
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise LoginRequired(
                f"no authorization came back to {self.redirect_uri} within {timeout:g} s; "
                "open the printed URL in a browser on this machine and approve the request"
            ) from None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        from mcp.client.auth import AuthorizationCodeResult

        try:
            line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # the request's headers: nothing in them is needed
            target = line.split(" ")[1] if line.count(" ") >= 2 else ""
            query = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
            if urlsplit(target).path != "/callback" or not ("code" in query or "error" in query):
                body, status = "Not the authorization response.", "404 Not Found"
            elif "error" in query:
                body, status = "Authorization refused; see the terminal.", "200 OK"
                if not self._result.done():
                    why = query.get("error_description") or query["error"]
                    self._result.set_exception(
                        LoginRequired(f"the authorization server refused the login: {why}")
                    )
            else:
                body, status = "Logged in; you can close this window.", "200 OK"
                if not self._result.done():
                    self._result.set_result(
                        AuthorizationCodeResult(
                            code=query["code"], state=query.get("state"), iss=query.get("iss")
                        )
                    )
            data = body.encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
                + data
            )
            await writer.drain()
        finally:
            writer.close()
