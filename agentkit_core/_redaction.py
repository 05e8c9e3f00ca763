"""Detectors of personal data and secrets in text, and the one function that redacts with them.

Every layer that redacts (the web guardrail's tool output, the redaction guard over requests and
answers) finds what to hide with these detectors, so a shape is recognised the same way
everywhere and fixed in one place. A detector is a pattern and, for the shapes that carry a
checksum, a check of the match: a card number must pass the Luhn check and an IBAN its
ISO 13616 mod-97 check, so an order id or a long reference that merely looks like one is left
alone. A phone number is only recognised by a shape that numbers in data rarely have: a leading
``+``, a parenthesised area code, the North American 3-3-4 grouping, or a national trunk ``0``
followed by separated groups. A bare run of digits (an order id, a Unix time) never matches, nor
do thousands groupings, ISO or European dates, or digits inside hex hashes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Final


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of sensitive text: a pattern, and a check a match must pass to count.

    ``kind`` names it (``"email"``) and makes its placeholder, ``[redacted email]``; ``check``
    (optional) is given the matched text and says whether it really is one (a checksum).

    ``anchor`` (optional) makes a long text cheap to scan: a pattern, or literal strings, that
    every match overlaps (``@`` for an e-mail address), found far faster than the pattern
    itself. Only the windows of ``reach`` characters around the anchors are then searched, and
    a match that runs to a window's edge is taken up again in the whole text, so the matches
    are the ones a search of the whole text finds. ``reach`` must be at least the length of the
    longest match on either side of its anchor (``reach_back`` before it, when set: the local
    part of an e-mail address is at most 64 characters, its domain up to 255).
    """

    kind: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None
    anchor: re.Pattern[str] | tuple[str, ...] | None = None
    reach: int = 0
    #: How far a match may start before its anchor, when that is less than ``reach``.
    reach_back: int | None = None

    @property
    def placeholder(self) -> str:
        """What replaces a match: ``[redacted <kind>]``."""
        return f"[redacted {self.kind}]"

    def find(self, text: str) -> list[str]:
        """Every match in ``text`` that passes the check, in order."""
        return [m.group() for m in self.matches(text)]

    def matches(self, text: str) -> list[re.Match[str]]:
        """The matches in ``text`` that pass the check, in order, not overlapping."""
        return [m for m in self._candidates(text) if self._passes(m.group())]

    def _passes(self, found: str) -> bool:
        return self.check is None or self.check(found)

    def _candidates(self, text: str) -> list[re.Match[str]]:
        if self.anchor is None:
            return list(self.pattern.finditer(text))
        found: list[re.Match[str]] = []
        end, pos = len(text), 0
        for lo, hi, last in self._windows(text):
            lo = max(lo, pos)
            # a match here overlaps an anchor of this window, so it starts before the last
            # one ends: the rest of the window (most of an e-mail's) is not searched in vain
            while lo < last:
                m = self.pattern.search(text, lo, hi)
                if m is None:
                    break
                if m.end() == hi < end:  # it may go on past the window: take it up whole
                    m = self.pattern.search(text, m.start())
                    if m is None:
                        return found
                found.append(m)
                lo = pos = m.end() if m.end() > m.start() else m.end() + 1
        return found

    def _windows(self, text: str) -> list[tuple[int, int, int]]:
        """The merged spans of ``reach`` characters around every anchor in ``text``.

        Each with where the last of its anchors ends.
        """
        spans: list[tuple[int, int]] = []
        if isinstance(self.anchor, tuple):
            for literal in self.anchor:
                at = text.find(literal)
                while at >= 0:
                    spans.append((at, at + len(literal)))
                    at = text.find(literal, at + 1)
            spans.sort()
        elif self.anchor is not None:
            spans = [m.span() for m in self.anchor.finditer(text)]
        merged: list[tuple[int, int, int]] = []
        back = self.reach if self.reach_back is None else self.reach_back
        for start, stop in spans:
            lo, hi = max(start - back, 0), min(stop + self.reach, len(text))
            if merged and lo <= merged[-1][1]:
                first, high, last = merged[-1]
                merged[-1] = (first, max(high, hi), max(last, stop))
            else:
                merged.append((lo, hi, stop))
        return merged


@dataclass(frozen=True, slots=True)
class Redacted:
    """A redacted text and how many of each kind were replaced (never the values)."""

    text: str
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Whether anything was replaced."""
        return bool(self.counts)

    def summary(self) -> str:
        """``"2 email, 1 card"``: what was replaced, by kind, in detector order."""
        return ", ".join(f"{n} {kind}" for kind, n in self.counts.items())


def luhn_valid(number: str) -> bool:
    """Whether the digits of ``number`` (separators ignored) pass the Luhn check."""
    digits = [int(c) for c in number if c.isdigit()]
    if not digits:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """Whether ``iban`` (spaces ignored) has an IBAN's length and passes its mod-97 check."""
    compact = iban.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34 or not compact.isalnum():
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _card(text: str) -> bool:
    return 13 <= sum(c.isdigit() for c in text) <= 19 and luhn_valid(text)


def _phone(text: str) -> bool:
    digits = sum(c.isdigit() for c in text)
    return (8 if text.startswith("+") else 9) <= digits <= 15


EMAIL: Final = Detector(
    "email",
    re.compile(
        r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}\b"
    ),
    anchor=("@",),
    reach=320,
    reach_back=72,
)

_SEP = r"[ .\-]"
PHONE: Final = Detector(
    "phone",
    re.compile(
        r"(?<![\w+./:-])(?:"
        rf"\+\d{{1,3}}(?:{_SEP}?\(?\d{{1,4}}\)?){{1,5}}"  # +44 20 7946 0958, +33612345678
        rf"|\(\d{{2,5}}\){_SEP}?\d{{3,4}}{_SEP}?\d{{3,5}}"  # (555) 123-4567, (030) 1234567
        rf"|\d{{3}}(?P<s>{_SEP})\d{{3}}(?P=s)\d{{4}}"  # 555-123-4567, 555.123.4567
        rf"|0\d{{1,4}}(?:{_SEP}\d{{2,8}}){{1,4}}"  # 030 12345678, 06 12 34 56 78
        r")(?![\w]|[.,\-/:]\d)"
    ),
    _phone,
    anchor=re.compile(r"[+(0-9][0-9 ().+-]{7,}"),
    reach=2,
)

#: 13 to 19 digits, in one run or in groups split by single spaces or hyphens.
CARD: Final = Detector(
    "card",
    re.compile(r"(?<![\w.+/-])\d(?:[ -]?\d){12,18}(?![\w]|[.,/-]\d)"),
    _card,
    anchor=re.compile(r"[0-9][0-9 -]{11,}[0-9]"),
    reach=2,
)

#: Two letters, two check digits, then 11 to 30 letters or digits, in groups of four or not.
IBAN: Final = Detector(
    "iban",
    re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"),
    iban_valid,
    anchor=re.compile(r"[A-Z][A-Z][0-9][0-9]"),
    reach=48,
)

#: The shapes of well-known API keys and tokens: OpenAI and Anthropic (``sk-``), Stripe,
#: AWS access key ids, GitHub tokens, Slack tokens, Google API keys, and JSON web tokens.
API_KEY: Final = Detector(
    "api key",
    re.compile(
        r"(?<![\w-])(?:"
        r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"
        r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"
        r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
        r"|gh[pousr]_[A-Za-z0-9]{36,}"
        r"|github_pat_[A-Za-z0-9_]{22,}"
        r"|xox[abprs]-[A-Za-z0-9-]{10,}"
        r"|AIza[0-9A-Za-z_-]{35}"
        r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
        r")(?![\w-])"
    ),
    anchor=(
        "sk-",
        "sk_",
        "rk_",
        "pk_",
        "AKIA",
        "ASIA",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "xoxa-",
        "xoxb-",
        "xoxp-",
        "xoxr-",
        "xoxs-",
        "AIza",
        "eyJ",
    ),
    reach=4096,
)

#: Every detector by kind, in the order :func:`redact_pii` applies them by default: secrets and
#: checksummed numbers before the looser phone shape, so a card is never half a phone number.
PII_DETECTORS: Final[Mapping[str, Detector]] = {
    d.kind: d for d in (API_KEY, CARD, IBAN, EMAIL, PHONE)
}


def redact_pii(text: str, detectors: Iterable[Detector] = PII_DETECTORS.values()) -> Redacted:
    """``text`` with what each detector finds replaced by its placeholder, in the given order.

    Each detector runs over the text the previous one left; a match its check rejects stays.
    The result counts the replacements by kind and never holds a replaced value.
    """
    counts: dict[str, int] = {}
    for detector in detectors:
        found = detector.matches(text)
        if not found:
            continue
        pieces, at = [], 0
        for m in found:
            pieces += [text[at : m.start()], detector.placeholder]
            at = m.end()
        pieces.append(text[at:])
        text = "".join(pieces)
        counts[detector.kind] = len(found)
    return Redacted(text, counts)
