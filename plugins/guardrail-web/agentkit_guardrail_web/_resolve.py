"""Resolving checks: where a URL's host name really points, refused unless every address is global.

What the guardrail cannot judge from the URL string alone (a public name such as
``127.0.0.1.nip.io`` may resolve to loopback), shared by :class:`WebGuardrail`'s ``resolve``
option and :class:`SafeFetcher`, which resolves each hop once and pins the connection to an
address that passed.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

from agentkit_core import ConfigError

from ._url import IPAddress
from ._url import IPNetwork
from ._url import Target
from ._url import address_reason
from ._url import in_networks
from ._url import parse_url
from ._url import refuse

#: ``async (url) -> None``: a check that may do I/O; raises GuardrailViolation to refuse.
URLCheck = Callable[[str], Awaitable[None]]
#: ``async (host, port) -> addresses``: how names are resolved (injectable for tests).
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the operating system resolves ``host`` to, without blocking the loop."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def networks(value: Iterable[Any], source: str) -> tuple[IPNetwork, ...]:
    out: list[IPNetwork] = []
    for item in value:
        try:
            out.append(ipaddress.ip_network(item))
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"{source}: {item!r} is not an IP network ({exc}); give e.g. "
                "ipaddress.ip_network('127.0.0.0/8') or '10.0.0.0/8'",
                value=item,
                source=source,
            ) from None
    return tuple(out)


def check_address(
    ip: IPAddress | str, url: str, allow_private_networks: Sequence[IPNetwork] = ()
) -> None:
    """Refuse ``url`` when ``ip`` is not global unicast and not in an allowed private network."""
    address = ipaddress.ip_address(ip) if isinstance(ip, str) else ip
    why = address_reason(address)
    if why is not None and not in_networks(address, allow_private_networks):
        raise refuse(url, f"address {address} is {why}")


class ResolvingURLCheck:
    """A ``url_check`` that resolves the URL's host and refuses it if any address is non-global.

    Names are the one thing :meth:`WebGuardrail.check_url` cannot judge without DNS: a public
    name such as ``127.0.0.1.nip.io`` may resolve to loopback. This check resolves with
    ``resolver`` (default: the system's, through ``loop.getaddrinfo``) and refuses a name that
    does not resolve or has any address outside global unicast (or ``allow_private_networks``).
    """

    def __init__(
        self,
        resolver: Resolver | None = None,
        *,
        allow_private_networks: Iterable[Any] = (),
    ) -> None:
        self.resolver: Resolver = resolver or system_resolver
        self.allow_private_networks = networks(
            allow_private_networks, "ResolvingURLCheck(allow_private_networks=...)"
        )

    async def addresses(self, url: str, target: Target) -> list[str]:
        """Every address ``target`` resolves to, each checked; refuses an empty answer."""
        if target.ip is not None:
            check_address(target.ip, url, self.allow_private_networks)
            return [str(target.ip)]
        try:
            found = list(await self.resolver(target.host, target.port))
        except OSError as exc:
            raise refuse(url, f"host {target.host!r} does not resolve ({exc})") from None
        if not found:
            raise refuse(url, f"host {target.host!r} resolved to no address")
        for address in found:
            check_address(address.split("%")[0], url, self.allow_private_networks)
        return found

    async def __call__(self, url: str) -> None:
        await self.addresses(url, parse_url(url))

    def __repr__(self) -> str:
        return f"<ResolvingURLCheck resolver={getattr(self.resolver, '__name__', self.resolver)}>"


#: The shipped resolving check, with the system resolver and no private networks allowed.
resolving_url_check = ResolvingURLCheck()
