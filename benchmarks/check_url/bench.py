"""check_url throughput on 10,000 mixed URLs, beside a plain urllib.parse + ipaddress check.

Run: python benchmarks/check_url/bench.py [--rounds N]
Prints the time of each checker (best of N rounds), their ratio, and per form of URL how many
each one refused, so the forms the baseline lets through are visible.
"""

from __future__ import annotations

import argparse
import ipaddress
import random
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable

from agentkit_guardrail_web import WebGuardrail

from agentkit_core import GuardrailViolation

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


def time_checker(check: Callable[[str], object], urls: list[str], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for url in urls:
            check(url)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    pairs = make_urls(random.Random(SEED))
    urls = [u for _, u in pairs]
    guard = WebGuardrail()

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

    t_base = time_checker(baseline_safe, urls, args.rounds)
    t_ours = time_checker(ours, urls, args.rounds)
    total: Counter[str] = Counter()
    refused_base: Counter[str] = Counter()
    refused_ours: Counter[str] = Counter()
    for form, url in pairs:
        total[form] += 1
        refused_base[form] += not baseline_safe(url)
        refused_ours[form] += not ours(url)
    print(f"{N} URLs, best of {args.rounds} rounds")
    print(f"baseline (urllib.parse + ipaddress): {t_base * 1e3:8.1f} ms  {N / t_base:10.0f} URLs/s")
    print(f"WebGuardrail.check_url:              {t_ours * 1e3:8.1f} ms  {N / t_ours:10.0f} URLs/s")
    print(f"ratio ours / baseline: {t_ours / t_base:.2f}x")
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
