"""SafeFetcher: an httpx client for tools that checks every hop and pins every connection.

Two SSRF vectors are out of reach of a check on the URL string: a redirect to a forbidden
address, and DNS that answers differently at check time and at connect time (rebinding). So
redirects are never followed by httpx; each hop is checked again (scheme, literal address,
egress allow list, ``url_check``), its name is resolved once here, every address is validated,
and the connection is made to the validated address through a network backend that refuses to
connect anywhere it was not told to. TLS still uses the original host name for SNI and
certificate checks, since httpcore hands the URL's host to ``start_tls``.
"""

from __future__ import annotations

from typing import Any

import httpcore
import httpx

from ._guardrail import Resolver
from ._guardrail import ResolvingURLCheck
from ._guardrail import WebGuardrail
from ._url import DEFAULT_PORTS
from ._url import refuse


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


class _PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its connection pool on the pinning backend."""

    def __init__(self, backend: _PinnedBackend, *, verify: Any = True) -> None:
        super().__init__(verify=verify, trust_env=False)
        # httpx does not take a network backend, so the pool it built is replaced by one that
        # uses ours (same options); request mapping and error mapping stay httpx's.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            network_backend=backend,
        )


class SafeFetcher:
    """Fetches URLs for tools under a :class:`WebGuardrail`.

    Args:
        guardrail: decides what may be fetched, on every hop.
        resolver: ``async (host, port) -> addresses`` (default: the system resolver).
        max_redirects: hops followed before giving up with a GuardrailViolation.
        timeout: seconds per request (httpx's timeout).
        verify: TLS verification, as httpx takes it.

    Use it as ``async with guardrail.fetcher() as fetch: response = await fetch.get(url)``.
    A refused hop raises :class:`~agentkit_core.GuardrailViolation` before any connection to
    it is made; ``response.history`` holds the redirects that were followed.
    """

    def __init__(
        self,
        guardrail: WebGuardrail,
        *,
        resolver: Resolver | None = None,
        max_redirects: int = 5,
        timeout: float = 10.0,
        verify: Any = True,
    ) -> None:
        self.guardrail = guardrail
        self._resolve = ResolvingURLCheck(
            resolver, allow_private_networks=guardrail.allow_private_networks
        )
        self.max_redirects = max_redirects
        self._backend = _PinnedBackend()
        self._client = httpx.AsyncClient(
            transport=_PinnedTransport(self._backend, verify=verify),
            timeout=timeout,
            trust_env=False,
            follow_redirects=False,
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

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send a request, following up to ``max_redirects`` redirects, each checked anew."""
        self.guardrail.inspect(url)  # as given, before httpx normalizes it
        request = self._client.build_request(method, url, **kwargs)
        history: list[httpx.Response] = []
        while True:
            await self._admit(request)
            response = await self._client.send(request, follow_redirects=False)
            next_request = response.next_request
            if next_request is None:
                response.history = history
                return response
            history.append(response)
            if len(history) > self.max_redirects:
                raise refuse(
                    url,
                    f"more than {self.max_redirects} redirects (last to {str(next_request.url)!r})",
                )
            request = next_request

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        """``request("GET", url, ...)``."""
        return await self.request("GET", url, **kwargs)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> SafeFetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
