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
    """

    kind: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None

    @property
    def placeholder(self) -> str:
        """What replaces a match: ``[redacted <kind>]``."""
        return f"[redacted {self.kind}]"

    def find(self, text: str) -> list[str]:
        """Every match in ``text`` that passes the check, in order."""
        return [m.group() for m in self.pattern.finditer(text) if self._passes(m.group())]

    def _passes(self, found: str) -> bool:
        return self.check is None or self.check(found)


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
)

#: 13 to 19 digits, in one run or in groups split by single spaces or hyphens.
CARD: Final = Detector(
    "card",
    re.compile(r"(?<![\w.+/-])\d(?:[ -]?\d){12,18}(?![\w]|[.,/-]\d)"),
    _card,
)

#: Two letters, two check digits, then 11 to 30 letters or digits, in groups of four or not.
IBAN: Final = Detector(
    "iban",
    re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"),
    iban_valid,
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
        replaced = 0

        def swap(match: re.Match[str], detector: Detector = detector) -> str:
            nonlocal replaced
            if not detector._passes(match.group()):
                return match.group()
            replaced += 1
            return detector.placeholder

        text = detector.pattern.sub(swap, text)
        if replaced:
            counts[detector.kind] = replaced
    return Redacted(text, counts)
