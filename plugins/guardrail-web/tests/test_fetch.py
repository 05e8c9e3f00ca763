"""SafeFetcher against real local servers: each redirect hop re-checked, connections pinned."""

from __future__ import annotations

import gzip
import ipaddress
import time
import tracemalloc
import zlib
from collections.abc import Callable
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING

import pytest
from agentkit_guardrail_web import ResolvingURLCheck
from agentkit_guardrail_web import SafeFetcher
from agentkit_guardrail_web import WebGuardrail
from agentkit_guardrail_web import system_resolver

from agentkit_core import ConfigError
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
        # malformed: a GuardrailViolation naming it, never an httpx error
        ("http://[::1", "malformed redirect Location"),
        ("http://exa mple.com/", "malformed redirect Location|whitespace"),
        ("http://:80/", "empty host"),
        ("http://good.test\\@127.0.0.2/", "backslash"),
        ("https://user@127.0.0.1/", "userinfo"),
    ],
)
async def test_a_redirect_to_metadata_or_a_malformed_location_is_refused(
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


# ---------------------------------------------------------------------- limits (issue 19)


def _headers(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.flush()


def drip(handler: BaseHTTPRequestHandler) -> None:
    """Promises 1,000 bytes and sends one every 0.1 s: each read is quick, the whole is not."""
    _headers(handler, 200, {"Content-Length": "1000"})
    for _ in range(1000):
        handler.wfile.write(b"x")
        handler.wfile.flush()
        time.sleep(0.1)


def endless(handler: BaseHTTPRequestHandler) -> None:
    """A chunked body that never ends."""
    _headers(handler, 200, {"Transfer-Encoding": "chunked"})
    chunk = b"y" * 65536
    while True:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def _bomb() -> bytes:
    """About 256 KB of gzip that inflates to 256 MiB of zeros (built once, in pieces)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = bytes(1 << 20)
    return b"".join(packer.compress(zeros) for _ in range(256)) + packer.flush()


BOMB = _bomb()


def bomb(handler: BaseHTTPRequestHandler) -> None:
    _headers(
        handler,
        200,
        {"Content-Encoding": "gzip", "Content-Length": str(len(BOMB))},
    )
    handler.wfile.write(BOMB)


def redirect_with_endless_body(to: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        _headers(handler, 302, {"Location": to, "Transfer-Encoding": "chunked"})
        while True:
            handler.wfile.write(b"10000\r\n" + b"z" * 65536 + b"\r\n")

    return answer


async def test_a_slow_drip_stops_at_the_deadline(servers: tuple[Server, Server]) -> None:
    good, _ = servers
    good.handlers["/drip"] = drip
    async with WebGuardrail(allow_private_networks=LAB).fetcher(deadline=1.0) as fetch:
        started = time.monotonic()
        with pytest.raises(GuardrailViolation, match=r"longer than its deadline of 1.0 s"):
            await fetch.get(good.url("/drip"))
    assert time.monotonic() - started < 3


async def test_an_endless_body_stops_at_the_size_limit_then_at_the_deadline(
    servers: tuple[Server, Server],
) -> None:
    good, _ = servers
    good.handlers["/endless"] = endless
    guard = WebGuardrail(allow_private_networks=LAB)
    async with guard.fetcher(max_body_bytes=1_000_000) as fetch:
        with pytest.raises(GuardrailViolation, match=r"larger than max_body_bytes=1000000"):
            await fetch.get(good.url("/endless"))
    async with guard.fetcher(max_body_bytes=1 << 40, deadline=1.0) as fetch:
        with pytest.raises(GuardrailViolation, match=r"deadline of 1.0 s"):
            await fetch.get(good.url("/endless"))


async def test_a_gzip_bomb_stops_before_it_inflates(servers: tuple[Server, Server]) -> None:
    good, _ = servers
    good.handlers["/bomb"] = bomb
    tracemalloc.start()
    try:
        async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
            with pytest.raises(GuardrailViolation, match=r"larger than max_body_bytes=10485760"):
                await fetch.get(good.url("/bomb"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * 1024 * 1024  # the body would be 256 MiB inflated


async def test_bodies_are_decoded_and_the_limit_counts_decoded_bytes(
    servers: tuple[Server, Server],
) -> None:
    good, _ = servers
    text = b"hello, " * 1000
    good.routes["/gz"] = (200, {"Content-Encoding": "gzip"}, gzip.compress(text))
    good.routes["/deflate"] = (200, {"Content-Encoding": "deflate"}, zlib.compress(text))
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    good.routes["/raw"] = (200, {"Content-Encoding": "deflate"}, raw.compress(text) + raw.flush())
    guard = WebGuardrail(allow_private_networks=LAB)
    async with guard.fetcher() as fetch:
        for path in ("/gz", "/deflate", "/raw"):
            response = await fetch.get(good.url(path))
            assert response.content == text and "content-encoding" not in response.headers
    async with guard.fetcher(max_body_bytes=len(text) - 1) as fetch:
        with pytest.raises(GuardrailViolation, match=r"larger than max_body_bytes"):
            await fetch.get(good.url("/gz"))  # 60 bytes on the wire, 7,000 decoded


async def test_a_declared_length_over_the_limit_is_refused_before_reading(
    servers: tuple[Server, Server],
) -> None:
    good, _ = servers
    good.routes["/big"] = (200, {}, b"z" * 2000)
    async with WebGuardrail(allow_private_networks=LAB).fetcher(max_body_bytes=1000) as fetch:
        with pytest.raises(GuardrailViolation, match=r"\(Content-Length 2000\)"):
            await fetch.get(good.url("/big"))


async def test_an_encoding_it_cannot_bound_is_refused(servers: tuple[Server, Server]) -> None:
    good, _ = servers
    good.routes["/br"] = (200, {"Content-Encoding": "br"}, b"\x0b\x02\x80hello\x03")
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=r"encoded as 'br'; only gzip and deflate"):
            await fetch.get(good.url("/br"))
    assert good.seen[-1][0] == "GET"


async def test_a_redirect_body_is_never_read(servers: tuple[Server, Server]) -> None:
    good, _ = servers
    good.handlers["/hop"] = redirect_with_endless_body("/done")
    async with WebGuardrail(allow_private_networks=LAB).fetcher(deadline=5.0) as fetch:
        response = await fetch.get(good.url("/hop"))
    assert response.text == "hello from 127.0.0.1"
    assert [r.status_code for r in response.history] == [302]


def test_limits_must_be_positive() -> None:
    with pytest.raises(ConfigError, match=r"positive deadline and max_body_bytes"):
        WebGuardrail().fetcher(deadline=0)


def test_the_guardrail_settings_are_the_fetcher_defaults() -> None:
    fetcher = WebGuardrail(fetch_deadline=2.5, max_body_bytes=1234).fetcher()
    assert (fetcher.deadline, fetcher.max_body_bytes) == (2.5, 1234)
    assert WebGuardrail(fetch_deadline=2.5).fetcher(deadline=1.0).deadline == 1.0


async def test_a_protocol_relative_location_is_checked_as_given(
    servers: tuple[Server, Server],
) -> None:
    good, evil = servers
    good.routes["/hop"] = redirect(f"//127.0.0.2:{evil.port}/")
    good.routes["/self"] = redirect(f"//127.0.0.1:{good.port}/done")
    async with WebGuardrail(allow_private_networks=LAB).fetcher() as fetch:
        with pytest.raises(GuardrailViolation, match=r"127.0.0.2 is loopback"):
            await fetch.get(good.url("/hop"))
        assert (await fetch.get(good.url("/self"))).text == "hello from 127.0.0.1"
    assert evil.seen == []
