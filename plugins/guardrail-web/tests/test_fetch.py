"""SafeFetcher against real local servers: each redirect hop re-checked, connections pinned."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest
from agentkit_guardrail_web import ResolvingURLCheck
from agentkit_guardrail_web import SafeFetcher
from agentkit_guardrail_web import WebGuardrail
from agentkit_guardrail_web import system_resolver

from agentkit_core import GuardrailViolation

if TYPE_CHECKING:
    from conftest import Server

# Only the "good" server's address counts as allowed; 127.0.0.2 stands for a forbidden host.
LAB = [ipaddress.ip_network("127.0.0.1/32")]


class Resolver:
    """A resolver that answers from a script per name, and counts the questions."""

    def __init__(self, answers: dict[str, list[Sequence[str]]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        script = self.answers[host]
        return script.pop(0) if len(script) > 1 else script[0]


def redirect(to: str, status: int = 302) -> tuple[int, dict[str, str], bytes]:
    return (status, {"Location": to}, b"")


async def test_fetches_an_allowed_address(servers: tuple[Server, Server]) -> None:
    good, evil = servers
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        response = await fetch.get(good.url("/ok"))
    assert response.status_code == 200
    assert response.text == "hello from 127.0.0.1"
    assert good.seen == [("GET", "/ok", f"127.0.0.1:{good.port}")]
    assert evil.seen == []


async def test_literal_forbidden_address_is_refused_before_connecting(
    servers: tuple[Server, Server],
) -> None:
    _, evil = servers
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=r"127.0.0.2 is loopback"):
            await fetch.get(evil.url("/ok"))
    assert evil.seen == []


async def test_a_name_is_connected_to_the_address_that_was_checked(
    servers: tuple[Server, Server],
) -> None:
    good, _ = servers
    # "app.test" exists in no DNS: the request only arrives because the connection is pinned.
    resolver = Resolver({"app.test": [["127.0.0.1"]]})
    guard = WebGuardrail(allow_private_networks=LAB)
    async with guard.fetcher(resolver=resolver) as fetch:
        response = await fetch.get(f"http://app.test:{good.port}/ok")
    assert response.text == "hello from 127.0.0.1"
    assert good.seen == [("GET", "/ok", f"app.test:{good.port}")]
    assert resolver.asked == ["app.test"]


async def test_rebinding_after_the_check_cannot_move_the_connection(
    servers: tuple[Server, Server],
) -> None:
    good, evil = servers
    # DNS answers the allowed address once, then the forbidden one from then on.
    resolver = Resolver({"rebind.test": [["127.0.0.1"], ["127.0.0.2"]]})
    async with WebGuardrail(allow_private_networks=LAB).fetcher(resolver=resolver) as fetch:
        response = await fetch.get(f"http://rebind.test:{good.port}/ok")
        assert response.text == "hello from 127.0.0.1"
        # The next hop asks again, sees the rebound answer, and is refused.
        with pytest.raises(GuardrailViolation, match=r"127.0.0.2 is loopback"):
            await fetch.get(f"http://rebind.test:{good.port}/again")
    assert evil.seen == []
    assert [path for _, path, _ in good.seen] == ["/ok"]


async def test_rebinding_between_url_check_and_fetch_is_refused(
    servers: tuple[Server, Server],
) -> None:
    good, evil = servers
    resolver = Resolver({"rebind.test": [["127.0.0.1"], ["127.0.0.2"]]})
    guard = WebGuardrail(
        allow_private_networks=LAB,
        url_check=ResolvingURLCheck(resolver, allow_private_networks=LAB),
    )
    async with guard.fetcher(resolver=resolver) as fetch:
        with pytest.raises(GuardrailViolation, match=r"127.0.0.2 is loopback"):
            await fetch.get(f"http://rebind.test:{good.port}/ok")
    assert resolver.asked == ["rebind.test", "rebind.test"]
    assert good.seen == [] and evil.seen == []


async def test_a_name_with_any_forbidden_address_is_refused(
    servers: tuple[Server, Server],
) -> None:
    good, evil = servers
    resolver = Resolver({"mixed.test": [["127.0.0.1", "127.0.0.2"]]})
    async with WebGuardrail(allow_private_networks=LAB).fetcher(resolver=resolver) as fetch:
        with pytest.raises(GuardrailViolation, match=r"127.0.0.2"):
            await fetch.get(f"http://mixed.test:{good.port}/ok")
    assert good.seen == [] and evil.seen == []


async def test_redirect_to_a_forbidden_address_is_refused(servers: tuple[Server, Server]) -> None:
    good, evil = servers
    good.routes["/hop"] = redirect(evil.url("/secret"))
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=r"127.0.0.2 is loopback"):
            await fetch.get(good.url("/hop"))
    assert evil.seen == []


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://0xa9fea9fe/latest/meta-data/", "169.254.169.254"),
        ("http://[::ffff:169.254.169.254]/", "link-local"),
        ("http://localhost/", "local name"),
    ],
)
async def test_redirect_to_metadata_spellings_is_refused(
    servers: tuple[Server, Server], location: str, reason: str
) -> None:
    good, _ = servers
    good.routes["/hop"] = redirect(location)
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=reason):
            await fetch.get(good.url("/hop"))


async def test_redirect_to_another_scheme_is_refused(servers: tuple[Server, Server]) -> None:
    good, _ = servers
    good.routes["/hop"] = redirect("ftp://example.com/file")
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=r"scheme 'ftp'"):
            await fetch.get(good.url("/hop"))


async def test_a_chain_whose_later_hop_is_forbidden_is_refused(
    servers: tuple[Server, Server],
) -> None:
    good, evil = servers
    good.routes["/a"] = redirect("/b")
    good.routes["/b"] = redirect(good.url("/c"), 307)
    good.routes["/c"] = redirect(f"http://0x7f000002:{evil.port}/")
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=r"127.0.0.2 is loopback"):
            await fetch.get(good.url("/a"))
    assert [path for _, path, _ in good.seen] == ["/a", "/b", "/c"]
    assert evil.seen == []


async def test_an_allowed_chain_is_followed_with_history(servers: tuple[Server, Server]) -> None:
    good, _ = servers
    good.routes["/a"] = redirect("/b", 301)
    good.routes["/b"] = redirect("/done", 303)
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        response = await fetch.request("POST", good.url("/a"), content=b"payload")
    assert response.text == "hello from 127.0.0.1"
    assert [r.status_code for r in response.history] == [301, 303]
    assert [(m, p) for m, p, _ in good.seen] == [("POST", "/a"), ("GET", "/b"), ("GET", "/done")]


async def test_redirect_hops_are_limited(servers: tuple[Server, Server]) -> None:
    good, _ = servers
    good.routes["/loop"] = redirect("/loop")
    async with WebGuardrail(allow_private_networks=LAB).fetcher(max_redirects=3) as fetch:
        with pytest.raises(GuardrailViolation, match=r"more than 3 redirects"):
            await fetch.get(good.url("/loop"))
    assert len(good.seen) == 4


async def test_redirect_out_of_egress_allow_is_refused(servers: tuple[Server, Server]) -> None:
    good, _ = servers
    resolver = Resolver({"docs.allowed.test": [["127.0.0.1"]], "other.test": [["127.0.0.1"]]})
    good.routes["/hop"] = redirect(f"http://other.test:{good.port}/")
    guard = WebGuardrail(egress_allow=["allowed.test"], allow_private_networks=LAB)
    async with SafeFetcher(guard, resolver=resolver) as fetch:
        with pytest.raises(GuardrailViolation, match=r"'other.test' is not in egress_allow"):
            await fetch.get(f"http://docs.allowed.test:{good.port}/hop")
    assert resolver.asked == ["docs.allowed.test"]


async def test_unresolvable_name_is_refused() -> None:
    async def nowhere(host: str, port: int) -> list[str]:
        raise OSError(f"no such host {host}")

    async with WebGuardrail().fetcher(resolver=nowhere) as fetch:
        with pytest.raises(GuardrailViolation, match=r"'nowhere.test' does not resolve"):
            await fetch.get("http://nowhere.test/")


async def test_pinned_backend_never_resolves_on_its_own() -> None:
    import httpcore
    from agentkit_guardrail_web._fetch import _PinnedBackend

    backend = _PinnedBackend()
    with pytest.raises(httpcore.ConnectError, match=r"no checked address is pinned"):
        await backend.connect_tcp("127.0.0.1", 80)
    with pytest.raises(httpcore.ConnectError, match=r"unix socket"):
        await backend.connect_unix_socket("/var/run/docker.sock")


async def test_resolving_url_check_refuses_a_public_name_with_a_private_address() -> None:
    check = ResolvingURLCheck(Resolver({"rebind.example.com": [["93.184.216.34", "10.0.0.5"]]}))
    with pytest.raises(GuardrailViolation, match=r"10.0.0.5 is private"):
        await check("https://rebind.example.com/")
    await ResolvingURLCheck(Resolver({"example.com": [["93.184.216.34"]]}))("https://example.com/")
    with pytest.raises(GuardrailViolation, match=r"resolved to no address"):
        await ResolvingURLCheck(Resolver({"empty.example.com": [[]]}))("https://empty.example.com/")


async def test_system_resolver_answers_a_literal_without_dns() -> None:
    assert await system_resolver("127.0.0.1", 80) == ["127.0.0.1"]


@pytest.mark.parametrize(
    "url", ["http://good.com\\@127.0.0.2/", "http://x.test@127.0.0.1/", "http://0x7f000002/"]
)
async def test_the_url_as_given_is_checked_before_httpx_reads_it(url: str) -> None:
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=r"refused"):
            await fetch.get(url)
