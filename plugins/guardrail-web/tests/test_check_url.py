"""check_url: every refused class of URL, and public URLs that must pass (over-blocking)."""

from __future__ import annotations

import ipaddress

import pytest
from agentkit_guardrail_web import WebGuardrail
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import GuardrailViolation

PUBLIC = [
    "http://example.com",
    "https://example.com/path?q=1#frag",
    "https://EXAMPLE.com:8443/",
    "http://example.com./",
    "https://1.1.1.1/",
    "http://8.8.8.8:80/dns",
    "http://[2606:4700::1111]/",
    "http://[2606:4700:4700::1111]:443/",
    "http://[::ffff:1.1.1.1]/",
    "http://[64:ff9b::808:808]/",
    "http://0x.example.com/",
    "http://10.example.com/",
    "http://127.0.0.1.nip.io/",
    "http://192.168.1.1.example.org/",
    "https://bücher.de/",
    "https://xn--bcher-kva.de/",
    "https://medium.com/@someone/post",
    "https://example.com/a@b",
    "https://example.com/?next=http://127.0.0.1/",
    "http://16843009/",  # decimal 1.1.1.1
    "http://0x01010101/",  # hex 1.1.1.1
]

REFUSED = [
    # (url, a fragment of the reason)
    ("ftp://example.com/", "scheme 'ftp'"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("gopher://example.com/", "scheme 'gopher'"),
    ("javascript:alert(1)", "scheme 'javascript'"),
    ("example.com/path", "no scheme"),
    ("//example.com/", "no scheme"),
    ("http:/example.com", "expected '//'"),
    ("http://127.0.0.1/", "loopback"),
    ("http://127.255.0.1:8080/", "loopback"),
    ("http://10.0.0.1/", "private"),
    ("http://172.16.5.4/", "private"),
    ("http://192.168.0.1/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://100.64.0.1/", "shared address"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://224.0.0.251/", "multicast"),
    ("http://255.255.255.255/", "reserved"),
    ("http://240.0.0.1/", "reserved"),
    ("http://192.0.2.10/", "documentation"),
    ("http://198.18.0.1/", "benchmarking"),
    # numeric spellings of loopback and metadata
    ("http://2130706433/", "127.0.0.1"),
    ("http://0x7f000001/", "127.0.0.1"),
    ("http://0X7F000001/", "127.0.0.1"),
    ("http://0177.0.0.1/", "127.0.0.1"),
    ("http://0177.0000.0000.0001/", "127.0.0.1"),
    ("http://127.1/", "127.0.0.1"),
    ("http://127.0.1/", "127.0.0.1"),
    ("http://0x7f.1/", "127.0.0.1"),
    ("http://0x7f.0.0.0x1/", "127.0.0.1"),
    ("http://0177.1/", "127.0.0.1"),
    ("http://0/", "0.0.0.0"),
    ("http://0x/", "0.0.0.0"),
    ("http://2852039166/", "169.254.169.254"),
    ("http://0xa9fea9fe/", "169.254.169.254"),
    ("http://0251.0376.0251.0376/", "169.254.169.254"),
    ("http://169.254.43518/", "169.254.169.254"),
    ("http://127.0.0.1./", "loopback"),
    ("http://１２７.０.０.１/", "loopback"),  # fullwidth digits, IDNA-mapped
    ("http://127。0。0。1/", "loopback"),  # ideographic full stops
    # IPv6 literals
    ("http://[::1]/", "loopback"),
    ("http://[::]/", "unspecified"),
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped form of 127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "IPv4-mapped form of 127.0.0.1"),
    ("http://[::ffff:169.254.169.254]/", "link-local"),
    ("http://[::127.0.0.1]/", "IPv4-compatible"),
    ("http://[::7f00:1]/", "IPv4-compatible"),
    ("http://[64:ff9b::127.0.0.1]/", "NAT64 form of 127.0.0.1"),
    ("http://[64:ff9b:1::1]/", "local-use NAT64"),
    ("http://[2002:7f00:1::]/", "6to4 form of 127.0.0.1"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[fe80::1%25eth0]/", "zone id"),
    ("http://[fc00::1]/", "unique local"),
    ("http://[fd12:3456::1]/", "unique local"),
    ("http://[ff02::1]/", "multicast"),
    ("http://[2001:db8::1]/", "documentation"),
    ("http://[2001::1]/", "IETF"),
    ("http://[100::1]/", "discard"),
    ("http://[fec0::1]/", "site-local"),
    ("http://[::1/", "unterminated"),
    ("http://[zz::1]/", "malformed IPv6"),
    ("http://::1/", "without brackets"),
    # hidden hosts
    ("http://good.com@127.0.0.1/", "userinfo"),
    ("http://user:pass@example.com/", "userinfo"),
    ("http://good.com\\@127.0.0.1/", "backslash"),
    ("http:\\\\127.0.0.1\\", "backslash"),
    ("http://%31%32%37.0.0.1/", "percent-encoded"),
    ("http://127.0.0.%31/", "percent-encoded"),
    ("http://example.com\t@127.0.0.1/", "control character"),
    ("http://exa\nmple.com/", "control character"),
    (" http://example.com/", "whitespace"),
    ("http://example.com\u200b/", "whitespace or control"),
    ("http://example.com\x00.evil/", "control character"),
    ("http:///path", "empty host"),
    ("http://:80/", "empty host"),
    ("http://example..com/", "empty label"),
    ("http://exa$mple.com/", "character no host name has"),
    ("http://faß.de/", "under IDNA 2008"),
    ("http://example.com:99999/", "invalid port"),
    ("http://example.com:8o/", "invalid port"),
    ("http://1.2.3.4.5/", "not a valid IPv4"),
    ("http://256.0.0.1/", "not a valid IPv4"),
    ("http://08.0.0.1/", "not a valid IPv4"),
    ("http://example.123/", "not a valid IPv4"),
    # names that never need public DNS
    ("http://localhost/", "local name"),
    ("http://LOCALHOST:8000/", "local name"),
    ("http://app.localhost/", "local name"),
    ("http://metadata.google.internal/", "local name"),
    ("http://printer.local/", "local name"),
    ("http://metadata/computeMetadata/v1/", "single-label"),
]


@pytest.fixture
def guard() -> WebGuardrail:
    return WebGuardrail()


@pytest.mark.parametrize("url", PUBLIC)
def test_public_urls_pass(guard: WebGuardrail, url: str) -> None:
    guard.check_url(url)


@pytest.mark.parametrize(("url", "reason"), REFUSED)
def test_refused_urls_name_the_url_and_reason(guard: WebGuardrail, url: str, reason: str) -> None:
    with pytest.raises(GuardrailViolation) as info:
        guard.check_url(url)
    assert reason in info.value.reason
    assert info.value.value == url
    assert repr(url) in str(info.value)


def test_non_string_is_refused(guard: WebGuardrail) -> None:
    with pytest.raises(GuardrailViolation, match=r"must be a string, got bytes"):
        guard.check_url(b"http://example.com")  # type: ignore[arg-type]


def test_allow_private_networks_admits_only_those_networks() -> None:
    guard = WebGuardrail(allow_private_networks=["127.0.0.0/8"])
    guard.check_url("http://127.0.0.1:8080/")
    guard.check_url("http://0x7f000001/")
    guard.check_url("http://[::ffff:127.0.0.1]/")
    with pytest.raises(GuardrailViolation, match=r"10.0.0.1 is private"):
        guard.check_url("http://10.0.0.1/")
    with pytest.raises(GuardrailViolation, match=r"local name"):
        guard.check_url("http://localhost/")


def test_allow_private_networks_rejects_garbage() -> None:
    with pytest.raises(ConfigError, match=r"'not-a-net' is not an IP network"):
        WebGuardrail(allow_private_networks=["not-a-net"])


# --------------------------------------------------------------------------- egress_allow


def test_egress_allow_is_default_deny() -> None:
    guard = WebGuardrail(egress_allow=["example.com"])
    guard.check_url("https://example.com/")
    guard.check_url("https://api.example.com/v1")
    guard.check_url("https://API.Example.COM./")
    for url in (
        "https://evil-example.com/",
        "https://example.com.evil.net/",
        "https://notexample.com/",
        "https://example.org/",
        "https://1.1.1.1/",
    ):
        with pytest.raises(GuardrailViolation, match=r"not in egress_allow"):
            guard.check_url(url)


def test_egress_allow_handles_idna_both_ways() -> None:
    guard = WebGuardrail(egress_allow=["bücher.de"])
    guard.check_url("https://xn--bcher-kva.de/")
    guard.check_url("https://shop.BÜCHER.de/")
    guard = WebGuardrail(egress_allow=["xn--bcher-kva.de"])
    guard.check_url("https://bücher.de/")
    with pytest.raises(GuardrailViolation, match=r"not in egress_allow"):
        guard.check_url("https://bucher.de/")


def test_egress_allow_ip_entries_match_only_that_address() -> None:
    guard = WebGuardrail(egress_allow=["1.1.1.1", "[2606:4700::1111]"])
    guard.check_url("https://1.1.1.1/")
    guard.check_url("https://16843009/")
    guard.check_url("http://[2606:4700:0::1111]/")
    with pytest.raises(GuardrailViolation, match=r"not in egress_allow"):
        guard.check_url("https://1.1.1.2/")
    with pytest.raises(GuardrailViolation, match=r"not in egress_allow"):
        guard.check_url("https://x.1.1.1.1.example/")


def test_egress_allow_does_not_admit_private_addresses() -> None:
    guard = WebGuardrail(egress_allow=["127.0.0.1"])
    with pytest.raises(GuardrailViolation, match=r"loopback"):
        guard.check_url("http://127.0.0.1/")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("*.example.com", "bare domain"),
        (".example.com", "bare domain"),
        ("https://example.com", "bare domain"),
        ("example.com/path", "bare domain"),
        ("", "not a domain name"),
        (3, "not a domain name"),
        ("exa mple.com", "character no host name has"),
    ],
)
def test_egress_allow_rejects_bad_entries(entry: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        WebGuardrail(egress_allow=[entry])  # type: ignore[list-item]


def test_egress_allow_rejects_a_bare_string() -> None:
    with pytest.raises(ConfigError, match=r"write egress_allow=\['example.com'\]"):
        WebGuardrail(egress_allow="example.com")


# --------------------------------------------------------------------------- properties

_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
_DOMAIN = (
    st.lists(_LABEL, min_size=2, max_size=4)
    .map(".".join)
    .filter(lambda d: not d.rpartition(".")[2].isdigit())
)


def _allowed(domain: str, host: str) -> bool:
    return WebGuardrail(egress_allow=[domain]).allowed_host(host)


@settings(max_examples=60, deadline=None)
@given(domain=_DOMAIN, sub=st.lists(_LABEL, max_size=3))
def test_property_subdomains_pass(domain: str, sub: list[str]) -> None:
    host = ".".join([*sub, domain])
    assert _allowed(domain, host)
    WebGuardrail(egress_allow=[domain]).check_url(f"https://{host.upper()}./x")


@settings(max_examples=60, deadline=None)
@given(domain=_DOMAIN, prefix=_LABEL, suffix=_DOMAIN)
def test_property_lookalikes_never_pass(domain: str, prefix: str, suffix: str) -> None:
    assert not _allowed(domain, f"{domain}.{suffix}") or f"{domain}.{suffix}".endswith("." + domain)
    assert not _allowed(domain, f"{prefix}-{domain}")
    assert not _allowed(domain, f"{prefix}{domain}")
    assert not _allowed(f"{prefix}.{domain}", domain)


@settings(max_examples=60, deadline=None)
@given(domain=_DOMAIN, host=_DOMAIN)
def test_property_rule_is_label_suffix(domain: str, host: str) -> None:
    expected = host == domain or host.endswith("." + domain)
    assert _allowed(domain, host) is expected
    guard = WebGuardrail(egress_allow=[domain])
    if expected:
        guard.check_url(f"http://{host}/")
    else:
        with pytest.raises(GuardrailViolation, match=r"not in egress_allow"):
            guard.check_url(f"http://{host}/")


# Ranges this guardrail refuses beyond what ipaddress.is_global says in every Python version.
_OUR_EXTRA = (ipaddress.ip_network("192.88.99.0/24"), ipaddress.ip_network("192.0.0.0/24"))


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_property_every_numeric_spelling_reads_as_the_address(n: int) -> None:
    ip = ipaddress.IPv4Address(n)
    a, b, c, d = ip.packed
    spellings = [
        str(n),
        hex(n),
        f"{a}.{(b << 16) | (c << 8) | d}",
        f"{a}.{b}.{(c << 8) | d}",
        f"0{a:o}.0x{b:x}.{c}.0{d:o}",
    ]
    public = (
        ip.is_global
        and not ip.is_multicast
        and not ip.is_reserved
        and not any(ip in net for net in _OUR_EXTRA)
    )
    guard = WebGuardrail()
    for host in spellings:
        url = f"http://{host}/"
        if public:
            assert guard.inspect(url).ip == ip
        else:
            with pytest.raises(GuardrailViolation, match=f"address {ip} is"):
                guard.check_url(url)
