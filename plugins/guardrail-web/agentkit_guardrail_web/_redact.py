"""Redacting e-mail addresses and phone numbers while leaving ids, prices, dates and hashes alone.

A phone number is only recognised by a shape that numbers in data rarely have: a leading
``+``, a parenthesised area code, the North American 3-3-4 grouping, or a national trunk
``0`` followed by separated groups. A bare run of digits (an order id, a Unix time) never
matches, nor do thousands groupings, ISO or European dates, or digits inside hex hashes.
"""

from __future__ import annotations

import re

EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}\b"
)

_SEP = r"[ .\-]"
PHONE = re.compile(
    r"(?<![\w+./:-])(?:"
    rf"\+\d{{1,3}}(?:{_SEP}?\(?\d{{1,4}}\)?){{1,5}}"  # +44 20 7946 0958, +33612345678
    rf"|\(\d{{2,5}}\){_SEP}?\d{{3,4}}{_SEP}?\d{{3,5}}"  # (555) 123-4567, (030) 1234567
    rf"|\d{{3}}(?P<s>{_SEP})\d{{3}}(?P=s)\d{{4}}"  # 555-123-4567, 555.123.4567
    rf"|0\d{{1,4}}(?:{_SEP}\d{{2,8}}){{1,4}}"  # 030 12345678, 06 12 34 56 78
    r")(?![\w]|[.,\-/:]\d)"
)


def _phone(match: re.Match[str]) -> str:
    digits = sum(c.isdigit() for c in match.group())
    plus = match.group().startswith("+")
    return "[redacted phone]" if (8 if plus else 9) <= digits <= 15 else match.group()


def redact(text: str) -> str:
    """``text`` with e-mail addresses and phone numbers replaced by ``[redacted ...]``."""
    text = EMAIL.sub("[redacted email]", text)
    return PHONE.sub(_phone, text)
