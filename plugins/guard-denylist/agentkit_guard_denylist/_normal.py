"""The normal form a denylist's entries are matched in, on input and output alike.

A listed term must not slip through because it was written with a tab, a line break or a
no-break space between its words, a zero-width character inside it, fullwidth letters or a
Unicode hyphen. So the guard matches in a normal form of the text, in which

* compatibility forms are folded (NFKC: fullwidth letters and digits are plain ones);
* invisible characters are gone: the default-ignorable code points (zero-width space and
  joiners, word joiner, soft hyphen, byte order mark, direction controls, variation
  selectors, tags) and the control characters that are not whitespace;
* every dash (Unicode's dash punctuation and the minus sign) is ``-``;
* every run of whitespace is one space.

Terms are also matched in a looser form of that (:func:`loose`): full case folding, no
combining marks.

agentkit-guard-redact reads texts in the same form (with a map back to the text, which a guard
that only refuses does not need) and carries its own copy of the two character classes below
(plugins never import each other); keep them in step.
"""

from __future__ import annotations

import re
import unicodedata

#: What the normal form drops: Unicode's default-ignorable code points, and the control
#: characters that are not whitespace (whitespace is collapsed, not dropped).
INVISIBLE = re.compile(
    "[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+"
)
#: What the normal form writes as ``-``: Unicode's dash punctuation (category Pd) and the
#: minus sign.
DASH = re.compile(
    "[\u058a\u05be\u1400\u1806\u2010-\u2015\u2212\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d\u301c"
    "\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead]"
)
#: A stretch of whitespace written as one space (a lone space is already one).
_SPACES = re.compile(r"\s(?:\s+|(?<! ))")
#: The ASCII a text already in normal form may hold: printable characters and the space.
_PLAIN = bytes(range(0x20, 0x7F))
#: Below this length ``str.isprintable`` tells a plain text quicker than deleting _PLAIN from
#: its bytes, whose table ``bytes.translate`` builds every call; above, it reads each character
#: up in the Unicode database, and is the slower (a 100 KB text: 8x).
_SHORT = 80
#: ASCII whitespace other than the space (the controls that are collapsed, not dropped).
_ASCII_SPACES = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"


def normal(text: str) -> str:
    """``text`` in the normal form entries are matched in (see the module)."""
    if not text.isascii():
        return folded(text)
    if len(text) < _SHORT and text.isprintable() and "  " not in text:
        return text  # the common case, told at C speed (printable ASCII is all in _PLAIN)
    odd = text.encode("ascii").translate(None, _PLAIN)
    if not odd and "  " not in text:
        return text
    # ASCII is its own NFKC and holds no dash to rewrite: only controls and spaces change
    if odd.translate(None, _ASCII_SPACES):
        text = INVISIBLE.sub("", text)
    words = text.split()  # the whitespace runs, each written as one space below
    if not words:
        return " " if text else ""
    return (
        (" " if text[0].isspace() else "") + " ".join(words) + (" " if text[-1].isspace() else "")
    )


def folded(text: str) -> str:
    """The normal form, every step taken (what :func:`normal` gives, at any text's cost)."""
    text = DASH.sub("-", INVISIBLE.sub("", unicodedata.normalize("NFKC", text)))
    return _SPACES.sub(" ", text)


class _Unmarked(dict[int, int | None]):
    """A ``str.translate`` table dropping combining marks (categories Mn and Me).

    Filled on first sight of each character, up to :data:`_REMEMBERED` of them (after that a
    new one is worked out each time), so hostile text cannot grow it without bound.
    """

    def __missing__(self, point: int) -> int | None:
        kept = None if unicodedata.category(chr(point)) in ("Mn", "Me") else point
        if len(self) < _REMEMBERED:
            self[point] = kept
        return kept


#: How many characters :class:`_Unmarked` remembers.
_REMEMBERED = 65536
_unmarked = _Unmarked()


def loose(seen: str) -> str:
    """``seen`` (a text in normal form) with case and accents gone, as terms are matched.

    Full case folding (``STRASSE`` and ``straße`` are one word, as are ``İ`` and ``i``,
    ``ς`` and ``σ``) and no combining marks (``K̶ill``, ``Kíll``: a mark put on a letter
    does not make another word for a reader). ASCII holds neither, and is its own: the
    guard's patterns ignore ASCII case.
    """
    if seen.isascii():
        return seen
    decomposed = unicodedata.normalize("NFKD", seen.casefold()).translate(_unmarked)
    return _SPACES.sub(" ", unicodedata.normalize("NFC", decomposed))  # a mark between spaces
