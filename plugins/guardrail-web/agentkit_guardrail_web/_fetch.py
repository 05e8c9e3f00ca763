"""SafeFetcher: an httpx client for tools that checks every hop and pins every connection.

Two SSRF vectors are out of reach of a check on the URL string: a redirect to a forbidden
address, and DNS that answers differently at check time and at connect time (rebinding). So
redirects are never followed by httpx; each hop is checked again (scheme, literal address,
egress allow list, ``url_check``), its name is resolved once here, every address is validated,
and the connection is made to the validated address through a network backend that refuses to
connect anywhere it was not told to. TLS still uses the original host name for SNI and
certificate checks, since httpcore hands the URL's host to ``start_tls``.

A fetch is also bounded: one total deadline over every hop and the body (a slow drip or an
endless body stops), a maximum body size counted while streaming and after decompression (a
gzip bomb stops before it inflates), and redirect bodies that are never read. Whatever goes
wrong on the wire (no connection, a timeout, a reply that is not HTTP, a flood of headers, a
cut or undecodable body) comes out as the one documented error, a GuardrailViolation naming
the URL, what happened and what to do, with httpx's error as its cause.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from collections.abc import Sequence
from typing import Any
from typing import Protocol

import anyio
import httpcore
import httpx

from agentkit_core import GuardrailViolation

from ._limits import check_fetch_limits
from ._resolve import Resolver
from ._resolve import ResolvingURLCheck
from ._url import DEFAULT_PORTS
from ._url import IPNetwork
from ._url import Target
from ._url import refuse

#: Defaults of :class:`SafeFetcher`: seconds for a whole fetch, and bytes of a decoded body.
DEFAULT_DEADLINE = 30.0
DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
#: The encodings a body may come in (and the only ones asked for).
ACCEPT_ENCODING = "gzip, deflate"
_READ = 64 * 1024
#: At most this much of httpx's own message is quoted in an error: it may quote the server's
#: bytes (an illegal status line), which are the server's to choose.
_DETAIL_CHARS = 200


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects ``(host, port)`` only to the address pinned for it; never resolves a name."""

    def __init__(self) -> None:
        self.pins: dict[tuple[str, int], str] = {}
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        address = self.pins.get((host.lower(), port))
        if address is None:
            raise httpcore.ConnectError(
                f"refusing to connect to {host}:{port}: no checked address is pinned for it"
            )
        return await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError(f"refusing to connect to unix socket {path!r}")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


#: httpcore's errors as the httpx errors a client raises (the most specific kind first).
_ERRORS: dict[type[Exception], type[httpx.RequestError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
    httpcore.ProtocolError: httpx.ProtocolError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
}
_CORE_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.ProxyError,
    httpcore.UnsupportedProtocol,
)


def _as_httpx(exc: Exception, request: httpx.Request) -> httpx.RequestError:
    """``exc`` (an httpcore error) as the httpx error of its kind, for ``request``."""
    kind = next(_ERRORS[k] for k in type(exc).__mro__ if k in _ERRORS)
    return kind(str(exc), request=request)


class _PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore connection pool of its own, on the pinning backend.

    httpx's own transport takes no network backend, so this one owns its pool and maps
    requests, responses and errors between the two libraries through their public API.
    """

    def __init__(self, backend: _PinnedBackend, *, verify: Any = True) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            network_backend=backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        url = request.url
        sent = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            answer = await self._pool.handle_async_request(sent)
        except _CORE_ERRORS as exc:
            raise _as_httpx(exc, request) from exc
        return httpx.Response(
            answer.status,
            headers=answer.headers,
            stream=_ResponseStream(answer, request),
            extensions=answer.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _ResponseStream(httpx.AsyncByteStream):
    """An httpcore response's body as httpx reads it, its errors as httpx errors."""

    def __init__(self, answer: httpcore.Response, request: httpx.Request) -> None:
        self._answer = answer
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._answer.aiter_stream():
                yield chunk
        except _CORE_ERRORS as exc:
            raise _as_httpx(exc, self._request) from exc

    async def aclose(self) -> None:
        await self._answer.aclose()


class _Body:
    """Decodes a body while it streams, refusing it once it passes ``limit`` decoded bytes.

    Decompression is asked for at most the room left, so a small compressed chunk never
    inflates past the limit in memory.
    """

    def __init__(self, url: str, encoding: str, limit: int) -> None:
        self.url = url
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.raw = 0
        coding = self.coding = encoding.strip().lower()
        if coding in ("", "identity"):
            self._inflate: Any = None
        elif coding in ("gzip", "x-gzip"):
            self._inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif coding == "deflate":
            self._inflate = zlib.decompressobj(zlib.MAX_WBITS)
        else:
            raise refuse(
                url,
                f"the response is encoded as {encoding!r}; only gzip and deflate are read "
                f"(the fetcher asks for {ACCEPT_ENCODING!r})",
            )
        #: deflate: until the first chunk decodes, raw deflate (no zlib wrapper) may be tried.
        self._may_be_raw = coding == "deflate"

    def feed(self, data: bytes) -> None:
        self.raw += len(data)
        if self.raw > self.limit + self.limit // 16 + 1024:
            raise self._too_large("its encoded form")
        if self._inflate is None:
            self._keep(data)
            return
        try:
            try:
                self._inflate_all(data)
            except zlib.error:
                if not self._may_be_raw:
                    raise
                self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, no wrapper
                self._inflate_all(data)
        except zlib.error as exc:
            raise refuse(
                self.url,
                f"the body is declared {self.coding!r} but does not decode ({exc}); the server "
                "sent a broken body, so use another URL or try again later",
            ) from exc
        self._may_be_raw = False

    def _inflate_all(self, data: bytes) -> None:
        self._keep(self._inflate.decompress(data, self.limit - self.size + 1))
        while self._inflate.unconsumed_tail:
            tail = self._inflate.unconsumed_tail
            self._keep(self._inflate.decompress(tail, self.limit - self.size + 1))

    def close(self) -> bytes:
        if self._inflate is not None:
            self._keep(self._inflate.flush())
        return b"".join(self.parts)

    def _keep(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise self._too_large("it")
        self.parts.append(data)

    def _too_large(self, what: str) -> Exception:
        return refuse(
            self.url,
            f"the body is larger than max_body_bytes={self.limit} ({what} passed the limit "
            "while streaming); raise max_body_bytes to read more",
        )


class HopChecks(Protocol):
    """What a fetcher asks of its guardrail on every hop (a :class:`WebGuardrail` answers)."""

    @property
    def allow_private_networks(self) -> Sequence[IPNetwork]:
        """Networks a hop may reach although they are not global."""
        ...

    def inspect(self, url: str) -> Target:
        """The URL's target after every check that needs no DNS; raises to refuse."""
        ...

    async def url_check(self, url: str) -> None:
        """The guardrail's checks that need I/O; raises to refuse."""
        ...


class SafeFetcher:
    """Fetches URLs for tools under a :class:`WebGuardrail`.

    Args:
        guardrail: decides what may be fetched, on every hop.
        resolver: ``async (host, port) -> addresses`` (default: the system resolver).
        max_redirects: hops followed before giving up with a GuardrailViolation.
        timeout: seconds each network operation may wait (connect, each read; httpx's).
        deadline: seconds the whole fetch may take, every hop and the body included
            (default 30).
        max_body_bytes: the most a body may hold once decoded (default 10 MiB); counted while
            it streams, so an endless body or a compression bomb stops at the limit.
        verify: TLS verification, as httpx takes it.

    Use it as ``async with guardrail.fetcher() as fetch: response = await fetch.get(url)``.
    A refused hop raises :class:`~agentkit_core.GuardrailViolation` before any connection to
    it is made; so do a malformed redirect ``Location``, a passed deadline, a body over the
    limit and an encoding other than gzip or deflate, and so does every failure on the wire
    (no connection, a timeout, a reply that is not HTTP, a cut or undecodable body), naming
    the hop's URL, with httpx's error as ``__cause__``. The response's body is read and decoded;
    ``response.history`` holds the redirects that were followed, their bodies never read.
    """

    def __init__(
        self,
        guardrail: HopChecks,
        *,
        resolver: Resolver | None = None,
        max_redirects: int = 5,
        timeout: float = 10.0,
        deadline: float = DEFAULT_DEADLINE,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        verify: Any = True,
    ) -> None:
        check_fetch_limits(deadline, max_body_bytes, "SafeFetcher(...)")
        self.guardrail = guardrail
        self._resolve = ResolvingURLCheck(
            resolver, allow_private_networks=guardrail.allow_private_networks
        )
        self.max_redirects = max_redirects
        self.timeout = timeout
        self.deadline = deadline
        self.max_body_bytes = max_body_bytes
        self._backend = _PinnedBackend()
        self._client = httpx.AsyncClient(
            transport=_PinnedTransport(self._backend, verify=verify),
            timeout=timeout,
            trust_env=False,
            follow_redirects=False,
            headers={"Accept-Encoding": ACCEPT_ENCODING},
            event_hooks={"response": [self._check_location]},
        )

    async def _admit(self, request: httpx.Request) -> None:
        """Check one hop and pin its connection to an address that passed."""
        url = str(request.url)
        target = self.guardrail.inspect(url)
        await self.guardrail.url_check(url)
        addresses = await self._resolve.addresses(url, target)
        host = request.url.raw_host.decode("ascii").lower()
        port = request.url.port or DEFAULT_PORTS[request.url.scheme]
        self._backend.pins[(host, port)] = addresses[0].split("%")[0]

    async def _check_location(self, response: httpx.Response) -> None:
        """A redirect's ``Location`` as given: well-formed, and an absolute one allowed."""
        if not response.has_redirect_location:
            return
        here = str(response.request.url)
        location = response.headers["Location"]
        try:
            url = httpx.URL(location)
            response.request.url.join(url)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise refuse(here, f"malformed redirect Location {location!r} ({exc})") from None
        if url.scheme:  # checked as given: httpx would fill in a missing host, say
            self.guardrail.inspect(location)
        elif url.host:  # protocol-relative: //host/path
            self.guardrail.inspect(f"{response.request.url.scheme}:{location.strip()}")
        # a relative path is checked once joined, as the next hop

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send a request, following up to ``max_redirects`` redirects, each checked anew."""
        self.guardrail.inspect(url)  # as given, before httpx normalizes it
        try:
            with anyio.fail_after(self.deadline):
                return await self._fetch(method, url, **kwargs)
        except TimeoutError:
            raise refuse(
                url,
                f"the fetch took longer than its deadline of {self.deadline} s (every hop and "
                "the body count); raise deadline to wait longer",
            ) from None

    async def _fetch(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        request = self._client.build_request(method, url, **kwargs)
        history: list[httpx.Response] = []
        while True:
            await self._admit(request)
            try:
                response = await self._client.send(request, stream=True, follow_redirects=False)
                next_request = response.next_request
                if next_request is None:
                    try:
                        return await self._read(response, history)
                    finally:
                        await response.aclose()
                await response.aclose()  # a redirect's body is never read
            except httpx.RequestError as exc:
                raise self._failed(str(request.url) if history else url, exc) from exc
            history.append(response)
            if len(history) > self.max_redirects:
                raise refuse(
                    url,
                    f"more than {self.max_redirects} redirects (last to {str(next_request.url)!r})",
                )
            request = next_request

    def _failed(self, url: str, exc: httpx.RequestError) -> GuardrailViolation:
        """The documented error for a hop that failed on the wire: what happened, what to do."""
        detail = str(exc) or type(exc).__name__
        if len(detail) > _DETAIL_CHARS:
            detail = f"{detail[:_DETAIL_CHARS]}... [{len(detail) - _DETAIL_CHARS} more characters]"
        detail = f"{type(exc).__name__}: {detail}"
        if isinstance(exc, httpx.TimeoutException):
            what = (
                f"the server did not answer within timeout={self.timeout} s ({detail}); raise "
                "timeout, or try again later"
            )
        elif isinstance(exc, httpx.ConnectError):
            what = (
                f"no connection could be made ({detail}); check that the host is up and the "
                "port is right, or try again later"
            )
        elif isinstance(exc, httpx.RemoteProtocolError):
            what = (
                f"the server's reply could not be read as HTTP ({detail}); it is cut short, "
                "garbled or has too many headers: use another URL, or try again later"
            )
        else:
            what = f"the fetch failed ({detail}); try again later or use another URL"
        return refuse(url, what)

    async def _read(
        self, response: httpx.Response, history: list[httpx.Response]
    ) -> httpx.Response:
        """The response with its body read and decoded under the limits."""
        url = str(response.request.url)
        declared = response.headers.get("Content-Length", "")
        encoding = response.headers.get("Content-Encoding", "")
        if declared.isdigit() and not encoding and int(declared) > self.max_body_bytes:
            raise refuse(
                url,
                f"the body is larger than max_body_bytes={self.max_body_bytes} (Content-Length "
                f"{declared}); raise max_body_bytes to read more",
            )
        body = _Body(url, encoding, self.max_body_bytes)
        async for chunk in response.aiter_raw(_READ):
            body.feed(chunk)
        headers = [
            (key, value)
            for key, value in response.headers.multi_items()
            if key.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        extensions: dict[str, Any] = {
            key: response.extensions[key]
            for key in ("http_version", "reason_phrase")
            if key in response.extensions
        }
        return httpx.Response(
            response.status_code,
            headers=headers,
            content=body.close(),
            request=response.request,
            extensions=extensions,
            history=history,
        )

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        """``request("GET", url, ...)``."""
        return await self.request("GET", url, **kwargs)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> SafeFetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
