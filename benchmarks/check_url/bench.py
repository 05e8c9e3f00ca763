"""check_url throughput on 10,000 mixed URLs, beside a plain urllib.parse + ipaddress check.

Run: python benchmarks/check_url/bench.py [--rounds N]
The guardrail is the installed plugin's, built by name (``get_guardrail("web")``) on the
process-wide plugin manager, which loads every installed plugin, as the README installs them.
The two checkers take turns, round after round; prints each one's time over 10,000 URLs and
their ratio (median and range over the rounds, the ratio taken within each round), the load
average, and per form of URL how many each one refused, so the forms the baseline lets through
are visible.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import random
import sys
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from agentkit_core import GuardrailViolation
from agentkit_core.plugin import get_guardrail

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for _report
from _report import spread

from agentkit_core import PluginManager

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

N = 10_000
SEED = 7


def baseline_check(url: str) -> bool:
    """The straightforward check: urlsplit, scheme, then ipaddress on the host. True = allowed."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return False
    host = parts.hostname
    if not host:
        return False
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return True  # a name
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
    )


def _v4(rng: random.Random, private: bool) -> ipaddress.IPv4Address:
    if private:
        net = rng.choice(["127.0.0.0/8", "10.0.0.0/8", "169.254.0.0/16", "192.168.0.0/16"])
        network = ipaddress.IPv4Network(net)
        return network[rng.randrange(1, network.num_addresses - 1)]
    while True:
        ip = ipaddress.IPv4Address(rng.getrandbits(32))
        if ip.is_global and not ip.is_multicast and not ip.is_reserved:
            return ip


def make_urls(rng: random.Random) -> list[tuple[str, str]]:
    """``(form, url)`` pairs; roughly the mix an agent's tool arguments show, plus attacks."""
    words = ["example", "docs", "api", "cdn", "news", "shop", "static", "blog", "mail", "wiki"]
    tlds = ["com", "org", "net", "io", "de", "co.uk"]

    def name() -> str:
        return f"{rng.choice(words)}{rng.randrange(100)}.{rng.choice(tlds)}"

    def path() -> str:
        return rng.choice(["/", "/a/b", "/search?q=x&page=2", "/v1/items/42#top", ""])

    forms: list[tuple[str, float, Callable[[], str]]] = [
        ("public name", 0.50, lambda: f"https://{name()}{path()}"),
        ("public dotted IPv4", 0.08, lambda: f"http://{_v4(rng, False)}{path()}"),
        ("private dotted IPv4", 0.08, lambda: f"http://{_v4(rng, True)}{path()}"),
        ("public IPv6", 0.03, lambda: f"http://[2606:4700::{rng.randrange(65535):x}]{path()}"),
        ("loopback IPv6", 0.02, lambda: "http://[::1]/"),
        ("non-http scheme", 0.03, lambda: f"{rng.choice(['ftp', 'file', 'gopher'])}://{name()}/"),
        ("decimal IPv4", 0.03, lambda: f"http://{int(_v4(rng, True))}/"),
        ("hex IPv4", 0.03, lambda: f"http://{hex(int(_v4(rng, True)))}/"),
        (
            "octal IPv4",
            0.03,
            lambda: "http://" + ".".join(f"0{b:o}" for b in _v4(rng, True).packed) + "/",
        ),
        (
            "short IPv4",
            0.03,
            lambda: rng.choice(["http://127.1/", "http://10.1/", "http://169.254.43518/"]),
        ),
        (
            "mixed IPv4",
            0.02,
            lambda: rng.choice(
                ["http://0x7f.1/", "http://0177.0.0x1/", "http://0xa9.254.0251.254/"]
            ),
        ),
        ("IPv4-mapped IPv6", 0.02, lambda: f"http://[::ffff:{_v4(rng, True)}]/"),
        ("IPv4-compatible IPv6", 0.01, lambda: f"http://[::{_v4(rng, True)}]/"),
        ("NAT64 IPv6", 0.01, lambda: f"http://[64:ff9b::{_v4(rng, True)}]/"),
        ("shared 100.64/10", 0.01, lambda: f"http://100.{rng.randrange(64, 128)}.0.1/"),
        ("userinfo", 0.02, lambda: f"http://{name()}@127.0.0.1/"),
        ("percent-encoded host", 0.01, lambda: "http://%31%32%37.0.0.1/"),
        ("trailing dot", 0.01, lambda: f"http://{_v4(rng, True)}./"),
        ("zone id", 0.01, lambda: "http://[fe80::1%25eth0]/"),
        (
            "localhost name",
            0.01,
            lambda: rng.choice(["http://localhost/", "http://metadata.google.internal/"]),
        ),
    ]
    weights = [w for _, w, _ in forms]
    out = []
    for _ in range(N):
        form, _, make = rng.choices(forms, weights)[0]
        out.append((form, make()))
    return out


def time_checker(check: Callable[[str], object], urls: list[str]) -> float:
    start = time.perf_counter()
    for url in urls:
        check(url)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    pairs = make_urls(random.Random(SEED))
    urls = [u for _, u in pairs]
    guard = get_guardrail(
        "web", manager=PM
    )  # every installed plugin loaded, the web one built by name

    def ours(url: str) -> bool:
        try:
            guard.check_url(url)
        except GuardrailViolation:
            return False
        return True

    def baseline_safe(url: str) -> bool:
        try:
            return baseline_check(url)
        except ValueError:  # urlsplit refuses some (bad IPv6 brackets)
            return False

    time_checker(baseline_safe, urls)  # warm-up
    time_checker(ours, urls)
    base_ms: list[float] = []
    ours_ms: list[float] = []
    loads: list[float] = []
    for r in range(args.rounds):
        loads.append(os.getloadavg()[0])
        first, second = (baseline_safe, ours) if r % 2 == 0 else (ours, baseline_safe)
        times = {first: time_checker(first, urls), second: time_checker(second, urls)}
        base_ms.append(times[baseline_safe] * 1e3)
        ours_ms.append(times[ours] * 1e3)
    ratios = [o / b for o, b in zip(ours_ms, base_ms, strict=True)]
    total: Counter[str] = Counter()
    refused_base: Counter[str] = Counter()
    refused_ours: Counter[str] = Counter()
    for form, url in pairs:
        total[form] += 1
        refused_base[form] += not baseline_safe(url)
        refused_ours[form] += not ours(url)
    print(
        f"{N} URLs, {args.rounds} interleaved rounds, load average "
        f"{min(loads):.1f}–{max(loads):.1f}; median (range) over the rounds"
    )
    print("| checker | 10,000 URLs, ms | ratio |")
    print("|---|---:|---:|")
    print(f"| baseline (urllib.parse + ipaddress) | {spread(base_ms, '.1f')} | 1.00x |")
    print(f"| `WebGuardrail.check_url` | {spread(ours_ms, '.1f')} | {spread(ratios, '.2f')}x |")
    print()
    print("| form | URLs | refused by baseline | refused by check_url |")
    print("|---|---:|---:|---:|")
    for form in sorted(total, key=lambda f: -total[f]):
        print(f"| {form} | {total[form]} | {refused_base[form]} | {refused_ours[form]} |")
    missed = sorted(f for f in total if refused_base[f] < refused_ours[f])
    wrong = sorted(f for f in total if refused_ours[f] < refused_base[f])
    print()
    print("forms the baseline lets through (in part or whole):", ", ".join(missed))
    print("forms check_url lets through that the baseline refuses:", ", ".join(wrong) or "none")


if __name__ == "__main__":
    main()
