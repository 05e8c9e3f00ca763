"""The normalised view of a text the detectors read, and the way back to the text as written.

A secret can be hidden from a pattern without being hidden from a reader, or a model: a
zero-width space inside an address, a fullwidth ``＠``, soft hyphens between a card's digits,
``sk‐`` written with a Unicode hyphen. So the detectors read a *view* of the text in which

* compatibility forms are folded (NFKC: ``＠`` is ``@``, fullwidth digits are digits);
* combining marks are gone (``bób@example.com``: an accent or a keycap on a character) and
  the decimal digits of every script are ASCII digits;
* invisible characters are gone: the default-ignorable code points (zero-width space and
  joiners, word joiner, soft hyphen, byte order mark, direction controls, variation
  selectors, tags) and the control characters that are not whitespace;
* every dash (Unicode's dash punctuation and the minus sign) is ``-``;
* every run of whitespace (tabs, line breaks, no-break and other wide spaces among it) is one
  space;
* the delimiter lines of the frames agentkit puts around untrusted data
  (``agentkit_core.plugin.frame_untrusted``, the web guardrail's framing of tool output) are gone:
  they are not part of what was framed, and a secret split between two framed tool results
  then reads whole.

The view keeps, edit by edit, how its offsets go back to the text, so a match found in it is
redacted in the text as written, over the whole span it came from: the invisible characters
inside the match go with it, the ones just outside stay.

agentkit-guard-denylist matches its entries on the same view, and carries its own copy of the
two character classes below (plugins never import each other); keep them in step.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

#: What the view drops: Unicode's default-ignorable code points, and the control characters
#: that are not whitespace (whitespace is collapsed, not dropped).
INVISIBLE = re.compile(
    "[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+"
)
#: What the view reads as ``-``: Unicode's dash punctuation (category Pd) and the minus sign.
DASH = re.compile(
    "[\u058a\u05be\u1400\u1806\u2010-\u2015\u2212\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d\u301c"
    "\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead]"
)
#: A frame's opening and closing delimiter lines (see ``agentkit_core.plugin.frame_untrusted``); the
#: payload between them never holds one (the frame escapes it).
FRAME_LINES = re.compile(
    r"<<UNTRUSTED id=[0-9A-Za-z]{1,64} [^<>\n]*>>\n|\n<<END UNTRUSTED id=[0-9A-Za-z]{1,64}>>"
)
#: A stretch of whitespace the view writes as one space (a lone space is already one).
SPACES = re.compile(r"\s(?:\s+|(?<! ))")
#: The ASCII a plain text is made of: printable characters and the space.
_PLAIN = bytes(range(0x20, 0x7F))
#: ASCII whitespace other than the space.
_ASCII_SPACES = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"


def fold(text: str) -> str:
    """``text`` in NFKC, without invisible characters, every dash ``-``; spaces as they are.

    Beyond ASCII also without combining marks, and with the decimal digits of every script
    as ASCII ones (see :func:`_plainer`).
    """
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = _plainer(text)
    return DASH.sub("-", INVISIBLE.sub("", text))


def _plainer(text: str) -> str:
    """``text`` without combining marks (Mn, Me), its decimal digits ASCII, recomposed.

    A mark on a character (``bób@example.com``, ``4111́ 1111 1111 1111``, a keycap
    ``4⃣``) hides it from a pattern, not from a reader; and ``٤١١١ ١١١١ ١١١١ ١١١١`` is a
    card number in Arabic-Indic digits, which NFKC keeps as they are.
    """
    kept: list[str] = []
    for char in unicodedata.normalize("NFKD", text):
        if unicodedata.category(char) in ("Mn", "Me"):
            continue
        digit = unicodedata.decimal(char, None)
        kept.append(char if digit is None or char.isascii() else str(digit))
    return unicodedata.normalize("NFC", "".join(kept))


@dataclass(frozen=True, slots=True)
class _Layer:
    """One set of edits: where each edit's text lies in the new text and what it replaced."""

    new_starts: list[int]
    new_ends: list[int]
    old_starts: list[int]
    old_ends: list[int]

    def start(self, at: int) -> int:
        """Where the new text's character ``at`` begins in the old text."""
        k = bisect_right(self.new_starts, at) - 1
        if k < 0:
            return at
        if at < self.new_ends[k]:  # inside an edit's text: from the start of what it replaced
            return self.old_starts[k]
        return at - self.new_ends[k] + self.old_ends[k]

    def end(self, at: int) -> int:
        """Where the new text's characters before ``at`` end in the old text (``at`` > 0)."""
        k = bisect_right(self.new_starts, at - 1) - 1
        if k < 0:
            return at
        if at - 1 < self.new_ends[k]:
            return self.old_ends[k]
        return at - self.new_ends[k] + self.old_ends[k]


def _apply(text: str, edits: Iterable[tuple[int, int, str]]) -> tuple[str, _Layer | None]:
    """``text`` with each ``(start, end, new)`` (in order, not overlapping) made, and the layer."""
    out: list[str] = []
    layer = _Layer([], [], [], [])
    at = size = 0
    for start, end, new in edits:
        out += [text[at:start], new]
        size += start - at
        layer.new_starts.append(size)
        size += len(new)
        layer.new_ends.append(size)
        layer.old_starts.append(start)
        layer.old_ends.append(end)
        at = end
    if not layer.new_starts:
        return text, None
    out.append(text[at:])
    return "".join(out), layer


class _Swaps(dict[int, str]):
    """A ``str.translate`` table: each character as the view writes it, or :data:`_WORK`.

    A character whose fold is one character that stands alone is swapped for it (``＠`` for
    ``@``, a no-break space for a space, ``‐`` for ``-``); one whose folding is more than a
    swap is :data:`_WORK`: it is dropped (invisible), becomes several characters, or joins the
    one before it (a combining mark; a Hangul vowel or final consonant).

    Filled on first sight of each character, up to :data:`_SWAPS` of them (after that a new
    one is worked out each time), so most of folding runs at C speed and moves no offset.
    """

    def __missing__(self, point: int) -> str:
        char = chr(point)
        new = fold(char)
        swap = new if len(new) == 1 and _starts_cluster(char) else _WORK
        if len(self) < _SWAPS:
            self[point] = swap
        return swap


#: How many characters :class:`_Swaps` remembers.
_SWAPS = 65536
#: What :class:`_Swaps` writes for a character folded cluster by cluster (one the view drops).
_WORK = "\x01"
_swaps = _Swaps()
_WORKS = re.compile(f"{_WORK}+")


def _starts_cluster(char: str) -> bool:
    """Whether NFKC treats ``char`` apart from the character before it.

    It does unless ``char`` is a combining mark, or a Hangul vowel or final consonant that
    joins the syllable before it. A mark that NFKC leaves alone (an enclosing keycap) goes with
    the character before it too: the view drops it, and a match ending there takes it along.
    """
    return (
        not unicodedata.combining(char)
        and unicodedata.category(char) not in ("Mn", "Me")
        and not "\u1160" <= char <= "\u11ff"
    )


#: A text's clusters repeat (an accented letter, a ligature): fold each once.
_fold_cluster = lru_cache(maxsize=4096)(fold)


def _folded(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """``text`` with each character swapped for its one-character fold, and edits for the rest.

    The edits fold, cluster by cluster (a character and the marks that combine with it), the
    characters :data:`_WORK` stands for.
    """
    swapped = text.translate(_swaps)
    edits: list[tuple[int, int, str]] = []
    for run in _WORKS.finditer(swapped):
        lo, hi = run.span()
        if lo and not _starts_cluster(text[lo]):
            lo -= 1  # the character the first mark combines with
        start = lo
        for at in range(lo + 1, hi + 1):
            if at == hi or _starts_cluster(text[at]):
                edits.append((start, at, _fold_cluster(text[start:at])))
                start = at
    return swapped, edits


@dataclass(frozen=True, slots=True)
class View:
    """A text as the detectors read it (:attr:`text`), with the way back to the text as written.

    ``View.of(text)`` normalises (see the module); :meth:`edited` replaces spans of the view
    (a detector's matches by its placeholder, so the next detector reads what the previous
    left); :meth:`source` gives the spans of the written text a span of the view came from.
    ``frames`` are the spans of the frame delimiter lines the view dropped.
    """

    text: str
    layers: tuple[_Layer, ...] = ()
    frames: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, text: str) -> View:
        """The normalised view of ``text``."""
        layers: list[_Layer] = []
        frames = [m.span() for m in FRAME_LINES.finditer(text)] if "<<" in text else []
        if frames:
            text, layer = _apply(text, ((start, end, "") for start, end in frames))
            layers += [layer] if layer else []
        if text.isascii():  # the common case, told at C speed
            odd = text.encode("ascii").translate(None, _PLAIN)
            folds = bool(odd.translate(None, _ASCII_SPACES))  # control characters to drop
            spaces = bool(odd) or "  " in text
        else:
            folds = True  # beyond ASCII a mark or a digit of another script may need it
            spaces = True
        if folds:
            text, layer = _apply(*_folded(text))
            layers += [layer] if layer else []
        if spaces or folds:  # a dropped character may have stood between two spaces
            found = SPACES.finditer(text)
            text, layer = _apply(text, ((m.start(), m.end(), " ") for m in found))
            layers += [layer] if layer else []
        return cls(text, tuple(layers), tuple(frames))

    def edited(self, edits: Iterable[tuple[int, int, str]]) -> View:
        """The view with each ``(start, end, new)`` of its text (in order) replaced."""
        text, layer = _apply(self.text, edits)
        return View(text, (*self.layers, layer), self.frames) if layer else self

    def source(self, start: int, end: int) -> list[tuple[int, int]]:
        """The spans of the written text the view's non-empty span ``start:end`` came from.

        One span, less the frame delimiter lines inside it: a match that runs from one framed
        tool result into the next leaves both frames whole.
        """
        for layer in reversed(self.layers):
            start, end = layer.start(start), layer.end(end)
        spans = []
        for lo, hi in self.frames:
            if start <= lo and hi <= end:
                if start < lo:
                    spans.append((start, lo))
                start = hi
        if start < end:
            spans.append((start, end))
        return spans
