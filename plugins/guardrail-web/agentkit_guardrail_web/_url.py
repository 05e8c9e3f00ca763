"""URL inspection without DNS: read a URL the way lenient HTTP stacks do, then classify its host.

The parser is deliberately stricter than any client: where parsers disagree (userinfo,
backslashes, percent-encoded hosts, missing slashes) the URL is refused rather than guessed,
and every numeric host spelling that ``inet_aton`` or the WHATWG URL standard still turns into
an address (decimal, hex, octal, short and mixed forms) is read as that address.
"""

from __future__ import annotations

import bisect
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agentkit_core import GuardrailViolation

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

DEFAULT_PORTS = {"http": 80, "https": 443}

# Whitespace, controls, backslashes and invisible format characters anywhere in a URL: some
# parsers strip them (WHATWG drops tabs and newlines), others stop at them.
_BAD_CHAR = re.compile(
    "[\x00-\x20\x7f-\xa0\\\\\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u3000\ufeff]"
)
_HEAD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):(//)?([^/?#]*)")
_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\Z")
_NUMERIC_LABEL = re.compile(r"(?:[0-9]+|0x[0-9a-f]*)\Z")
_DEC = re.compile(r"(?:0|[1-9][0-9]*)\Z")
_OCT = re.compile(r"0[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-f]*\Z")

# Names that resolve to this machine or a private network without asking public DNS.
_LOCAL_NAMES = ("localhost", "localdomain", "local", "internal", "home.arpa", "lan", "intranet")
_LOCAL_HOSTS = frozenset({"ip6-localhost", "ip6-loopback"})

# IPv4 ranges that are not globally reachable unicast (IANA special-purpose registry).
_V4_BLOCKS: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "'this network' (unspecified: 0.0.0.0 reaches this host, like loopback)"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared address space (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local (cloud metadata lives here)"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved (includes broadcast)"),
)
_V4_RANGES = sorted(
    (int(net.network_address), int(net.broadcast_address), why)
    for net, why in ((ipaddress.IPv4Network(n), w) for n, w in _V4_BLOCKS)
)
_V4_STARTS = [start for start, _, _ in _V4_RANGES]

# IPv6: only 2000::/3 is global unicast; inside it these are not.
_V6_BLOCKS: tuple[tuple[IPNetwork, str], ...] = (
    (ipaddress.IPv6Network("2001::/23"), "IETF protocol assignments (Teredo, ORCHID...)"),
    (ipaddress.IPv6Network("2001:db8::/32"), "documentation"),
    (ipaddress.IPv6Network("3fff::/20"), "documentation"),
)
_V6_NAMED: tuple[tuple[IPNetwork, str], ...] = (
    (ipaddress.IPv6Network("::/128"), "unspecified (it reaches this host, like loopback)"),
    (ipaddress.IPv6Network("::1/128"), "loopback"),
    (ipaddress.IPv6Network("::/96"), "deprecated IPv4-compatible"),
    (ipaddress.IPv6Network("64:ff9b:1::/48"), "local-use NAT64"),
    (ipaddress.IPv6Network("100::/64"), "discard-only"),
    (ipaddress.IPv6Network("fc00::/7"), "unique local (private)"),
    (ipaddress.IPv6Network("fe80::/10"), "link-local"),
    (ipaddress.IPv6Network("fec0::/10"), "deprecated site-local"),
    (ipaddress.IPv6Network("ff00::/8"), "multicast"),
)
_V6_GLOBAL_LO = int(ipaddress.IPv6Address("2000::"))
_V6_GLOBAL_HI = int(ipaddress.IPv6Address("3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"))
_NAT64 = int(ipaddress.IPv6Address("64:ff9b::")) >> 32


@dataclass(frozen=True, slots=True)
class Target:
    """Where a URL points: scheme, canonical host (a lowercase name or an IP), port, and the IP."""

    scheme: str
    host: str
    port: int
    ip: IPAddress | None


def refuse(url: str, reason: str) -> GuardrailViolation:
    """The error for a refused URL, naming it and why."""
    return GuardrailViolation(f"URL {url!r} refused: {reason}", value=url, reason=reason)


def parse_url(url: str) -> Target:
    """Read ``url`` into a :class:`Target`, refusing anything ambiguous; no DNS, no allow lists."""
    if not isinstance(url, str):
        raise GuardrailViolation(
            f"URL must be a string, got {type(url).__name__}", value=url, reason="not a string"
        )
    bad = _BAD_CHAR.search(url)
    if bad is not None:
        char = bad.group()
        kind = "backslash" if char == "\\" else f"whitespace or control character {char!r}"
        raise refuse(url, f"{kind} in URL (parsers disagree on where such a URL points)")
    head = _HEAD.match(url)
    if head is None:
        raise refuse(url, "no scheme; only absolute http:// and https:// URLs are allowed")
    scheme = head.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise refuse(url, f"scheme {scheme!r} is not allowed; only http and https")
    if head.group(2) is None:
        raise refuse(url, f"expected '//' after '{scheme}:'")
    authority = head.group(3)
    if "@" in authority:
        raise refuse(
            url, "userinfo ('user@') in URL: it hides the real host; parsers split it differently"
        )
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise refuse(url, "unterminated IPv6 literal")
        raw_host, rest = authority[: end + 1], authority[end + 1 :]
        if rest and rest[0] != ":":
            raise refuse(url, "junk after IPv6 literal")
        port_text = rest[1:]
    else:
        raw_host, _, port_text = authority.partition(":")
        if ":" in port_text:
            raise refuse(url, "IPv6 literal without brackets")
    if port_text:
        if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
            raise refuse(url, f"invalid port {port_text!r}")
        port = int(port_text)
    else:
        port = DEFAULT_PORTS[scheme]
    host, ip = parse_host(raw_host, url)
    return Target(scheme, host, port, ip)


def normalize_name(name: str) -> str:
    """A host name lowercased, IDNA-encoded and with one trailing dot dropped.

    IDNA maps Unicode look-alike digits and dots to ASCII; raises ``ValueError`` naming the
    problem.
    """
    if not name.isascii():
        name = _idna(name)
    name = name.lower()
    if name.endswith("."):
        name = name[:-1]
    if not _NAME.match(name):
        raise ValueError("host is empty, has an empty label or a character no host name has")
    return name


def _idna(name: str) -> str:
    """The ASCII form of a Unicode name, refused where IDNA 2003 and IDNA 2008 disagree.

    Python's codec (IDNA 2003) maps ``faß.de`` to ``fass.de`` while httpx (IDNA 2008, through
    the ``idna`` package) connects to ``xn--fa-hia.de``: an allow list judged on one spelling
    would admit the other host.
    """
    import idna

    try:
        ours = name.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"host is not valid IDNA ({exc})") from None
    try:
        theirs = idna.encode(name, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise ValueError(f"host is not valid IDNA 2008 ({exc})") from None
    if ours.lower().rstrip(".") != theirs.lower().rstrip("."):
        raise ValueError(
            f"host {name!r} is {ours!r} under IDNA 2003 but {theirs!r} under IDNA 2008"
        )
    return ours


def parse_host(raw: str, url: str) -> tuple[str, IPAddress | None]:
    """The canonical host and, when it is a literal address in any spelling, the address."""
    if not raw:
        raise refuse(url, "empty host")
    if raw[0] == "[":
        inner = raw[1:-1]
        if "%" in inner:
            raise refuse(url, "IPv6 zone id in host (it names a local interface)")
        try:
            ip6 = ipaddress.IPv6Address(inner)
        except ValueError:
            raise refuse(url, f"malformed IPv6 literal {raw!r}") from None
        return ip6.compressed, ip6
    if "%" in raw:
        raise refuse(url, "percent-encoded host (decoders disagree on what it spells)")
    try:
        host = normalize_name(raw)
    except ValueError as exc:
        raise refuse(url, str(exc)) from None
    last = host.rpartition(".")[2]
    if _NUMERIC_LABEL.match(last):
        number = parse_ipv4_number(host)
        if number is None:
            raise refuse(url, f"numeric host {raw!r} is not a valid IPv4 address")
        ip4 = ipaddress.IPv4Address(number)
        return str(ip4), ip4
    if host in _LOCAL_HOSTS or any(host == n or host.endswith("." + n) for n in _LOCAL_NAMES):
        raise refuse(url, f"host {host!r} is a local name (it never needs public DNS)")
    if "." not in host:
        raise refuse(url, f"single-label host {host!r} (resolved through local search domains)")
    return host, None


def parse_ipv4_number(host: str) -> int | None:
    """The 32-bit number ``inet_aton`` reads from ``host``, or None.

    1 to 4 parts, each decimal, octal with a leading 0, or hex with 0x; the last part fills
    the remaining bytes.
    """
    parts = host.split(".")
    if len(parts) > 4:
        return None
    values: list[int] = []
    for part in parts:
        if _DEC.match(part):
            values.append(int(part))
        elif _HEX.match(part):
            values.append(int(part[2:] or "0", 16))
        elif _OCT.match(part):
            values.append(int(part, 8))
        else:
            return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    number = last
    for i, v in enumerate(head):
        number |= v << (8 * (3 - i))
    return number


def _v4_reason(number: int) -> str | None:
    i = bisect.bisect_right(_V4_STARTS, number) - 1
    if i >= 0:
        start, end, why = _V4_RANGES[i]
        if start <= number <= end:
            return why
    return None


def address_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a global unicast address, or None when it is one."""
    if ip.version == 4:
        return _v4_reason(int(ip))
    n = int(ip)
    embedded: tuple[int, str] | None = None
    if n >> 32 == 0xFFFF:
        embedded = (n & 0xFFFFFFFF, "IPv4-mapped")
    elif n >> 32 == _NAT64:
        embedded = (n & 0xFFFFFFFF, "NAT64")
    elif n >> 112 == 0x2002:
        embedded = ((n >> 80) & 0xFFFFFFFF, "6to4")
    if embedded is not None:
        why = _v4_reason(embedded[0])
        inner = ipaddress.IPv4Address(embedded[0])
        return f"{embedded[1]} form of {inner}, which is {why}" if why else None
    for net, why in _V6_NAMED:
        if ip in net:
            return why
    if not _V6_GLOBAL_LO <= n <= _V6_GLOBAL_HI:
        return "reserved (outside IPv6 global unicast 2000::/3)"
    for net, why in _V6_BLOCKS:
        if ip in net:
            return why
    return None


def embedded_v4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, NAT64 or 6to4 address reaches, if it is one."""
    if ip.version == 4:
        return None
    n = int(ip)
    if n >> 32 in (0xFFFF, _NAT64):
        return ipaddress.IPv4Address(n & 0xFFFFFFFF)
    if n >> 112 == 0x2002:
        return ipaddress.IPv4Address((n >> 80) & 0xFFFFFFFF)
    return None


def in_networks(ip: IPAddress, networks: Iterable[IPNetwork]) -> bool:
    """Whether ``ip``, or the IPv4 address it embeds, lies in one of ``networks``."""
    inner = embedded_v4(ip)
    return any(ip in net or (inner is not None and inner in net) for net in networks)
