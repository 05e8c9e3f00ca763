"""Denylist: entries from a file (or given in code), refused where they appear.

Entries are matched in the normal form of the text (``_normal``): a term written with a tab,
a no-break space or a line break between its words, a zero-width character inside it,
fullwidth letters or a Unicode hyphen is still the term; so is one in another case (``ß``
and ``SS``) or with combining marks put on its letters (``_normal.loose``).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core.plugin import Guard
from agentkit_core.plugin import GuardDecision
from agentkit_core.plugin import GuardInput

from ._normal import loose
from ._normal import normal

#: What marks a line of the file as a regular expression.
REGEX = "re:"


#: How a term that starts with a word character begins: at a word boundary.
_WORD_START = r"\b"


@dataclass(frozen=True, slots=True)
class Entry:
    r"""One entry: its pattern, and where it was written (``"denylist.txt:3"``, ``"terms[0]"``).

    ``word_start``: a term's pattern that is ``\b`` followed by the rest (see :func:`combined`).
    ``term``: a term's text in the loose form ("" for a regular expression).
    """

    pattern: str
    where: str
    word_start: bool = False
    term: str = ""


def _term(written: str, where: str) -> Entry:
    """A term as an entry: literal in normal form, a whole word at an end that is a word character.

    The term is kept in the loose form (:func:`loose`), where it is looked for; a term that
    is nothing there (only invisible characters or marks) is a ConfigError.
    """
    term = loose(normal(written)).strip()
    if not term:
        raise ConfigError(
            f"guard 'denylist': the term at {where} ({written!r}) is empty once its invisible "
            "characters, combining marks and spaces are dropped, and would match every text; "
            "remove it",
            value=written,
            source=where,
        )
    start = re.match(r"\w", term) is not None
    end = r"\b" if re.search(r"\w\Z", term) else ""
    pattern = f"{_WORD_START if start else ''}{re.escape(term)}{end}"
    return Entry(pattern, where, word_start=start, term=term)


def combined(entries: Sequence[Entry]) -> str:
    r"""One pattern for all entries, each entry a group ``e<index>``, tried in their order.

    Consecutive terms that start at a word boundary share one ``\b`` ahead of their group:
    ``\b(?:(?P<e0>one\b)|(?P<e1>two\b))`` finds what ``(?P<e0>\bone\b)|(?P<e1>\btwo\b)``
    finds, the same entry first (the assertion takes no characters), but the engine asks it
    once a position instead of once a term: a case-insensitive alternation has no prefix to
    search for, and a ten-term list over a framed tool result cost over four times as much.
    """
    parts: list[str] = []
    for word_start, run in itertools.groupby(enumerate(entries), key=lambda e: e[1].word_start):
        if word_start:
            rest = "|".join(f"(?P<e{i}>{e.pattern[len(_WORD_START) :]})" for i, e in run)
            parts.append(f"{_WORD_START}(?:{rest})")
        else:
            parts.extend(f"(?P<e{i}>{e.pattern})" for i, e in run)
    return "|".join(parts)


def _strings(value: object, name: str) -> Sequence[str]:
    """``terms=`` or ``patterns=``: a list of strings, else a ConfigError naming the value.

    One string is not read as its characters (``terms="rm"`` would refuse the words ``r`` and
    ``m``, and let ``rm`` through), nor a table as its keys.
    """
    if (
        isinstance(value, str | bytes | Mapping)
        or not isinstance(value, Sequence)
        or not all(isinstance(item, str) for item in value)
    ):
        hint = f"; write {name}=[{value!r}]" if isinstance(value, str) else ""
        raise ConfigError(
            f"guard 'denylist': {name}= must be a list of strings, got {value!r}{hint}",
            value=value,
            source=f"guard_options['denylist']['{name}']",
        )
    return value


def _switch(value: object, name: str) -> bool:
    """``input=`` or ``output=``: true or false, else a ConfigError naming the value.

    ``None`` or ``0`` would turn the check off, and a string such as ``"no"`` on: neither is
    read as a yes or a no.
    """
    if not isinstance(value, bool):
        raise ConfigError(
            f"guard 'denylist': {name}={value!r} must be True or False (whether "
            f"{'requests' if name == 'input' else 'answers'} are checked)",
            value=value,
            source=f"guard_options['denylist']['{name}']",
        )
    return value


def read_entries(path: str | os.PathLike[str]) -> list[Entry]:
    """The entries of a denylist file; an unreadable file is a ConfigError naming it.

    A byte order mark at its start (an editor's UTF-8 signature) is not part of the first
    line: read as text, it would make a first ``re:`` line a literal term that matches nothing.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, ValueError) as exc:  # also text that is not UTF-8, a NUL, a lone surrogate
        raise ConfigError(
            f"guard 'denylist': cannot read the denylist file {os.fspath(path)!r}: {exc}",
            value=os.fspath(path),
            source="guard_options['denylist']['path']",
        ) from exc
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        where = f"{os.fspath(path)}:{number}"
        if entry.startswith(REGEX):
            entries.append(Entry(entry[len(REGEX) :].strip(), where))
        else:
            entries.append(_term(entry, where))
    return entries


def _compiled(entry: Entry) -> re.Pattern[str]:
    """``entry``'s pattern compiled; a ConfigError naming it if it is none, or matches anything.

    A pattern that matches the empty text (``re:`` with nothing after it, ``a*``, ``x|``)
    matches every text, so the guard would refuse every request: a slip of the file, not a
    list of what to refuse.
    """
    try:
        pattern = re.compile(entry.pattern, re.IGNORECASE)
    except re.error as exc:
        raise ConfigError(
            f"guard 'denylist': the entry at {entry.where} is not a regular expression "
            f"({exc}); fix or escape it",
            value=entry.where,
            source=entry.where,
        ) from exc
    if pattern.search("") is not None:
        written = "nothing" if not entry.pattern else repr(entry.pattern)
        raise ConfigError(
            f"guard 'denylist': the entry at {entry.where} is {written}, a regular expression "
            "that matches the empty text and so every text; give what to refuse, or remove it",
            value=entry.pattern,
            source=entry.where,
        )
    return pattern


@dataclass(frozen=True, slots=True)
class Sieve:
    """Tells at C speed most texts in which no entry can appear, as the combined pattern would.

    A case-insensitive alternation of named groups, most of them starting at a word boundary,
    has no prefix the regular expression engine can scan for: it tries every position, and a
    framed tool result of 200 characters took tens of microseconds. The sieve asks cheaper
    questions whose "no" is the pattern's: an ASCII term can only match an ASCII text that
    holds it lower-cased (ASCII letters are equal ignoring case exactly when their lower cases
    are), so ``lowered``, the alternation of those terms lower-cased and escaped, searched in
    the lower-cased text finds one if any is there, in one call; every other entry
    (``others``) is searched on its own, where the engine is quick. A text that is not ASCII is
    left to the pattern.
    """

    lowered: re.Pattern[str] | None
    others: tuple[re.Pattern[str], ...]

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> Sieve | None:
        """The sieve of ``entries``, or None when an entry has groups of its own.

        A group would be numbered otherwise in the combined pattern (a back-reference in it
        would not mean what it means alone), so such a list is always searched whole.
        """
        lowered: list[str] = []
        others: list[re.Pattern[str]] = []
        for entry in entries:
            alone = re.compile(entry.pattern, re.IGNORECASE)
            if alone.groups:
                return None
            if entry.term.isascii() and entry.term:
                lowered.append(entry.term.lower())
            else:
                others.append(alone)
        literal = re.compile("|".join(map(re.escape, lowered))) if lowered else None
        return cls(literal, tuple(others))

    def clean(self, text: str) -> bool:
        """Whether no entry can appear in ``text`` (False: it may; search it)."""
        if not text.isascii():
            return False
        if self.lowered is not None and self.lowered.search(text.lower()):
            return False
        for pattern in self.others:
            if pattern.search(text):
                return False
        return True


class Denylist(Guard):
    """Blocks an input or an answer in which an entry appears.

    ``path`` is a denylist file (one entry a line: a term, or ``re:`` and a regular expression;
    ``#`` comments); ``terms`` and ``patterns`` add entries in code. Terms match in any case.
    Entries are searched for in the normal form of the text (NFKC, invisible characters
    dropped, dashes as ``-``, each whitespace run one space; see ``_normal``), then in its
    loose form (full case folding, no combining marks), terms written in the loose form; a
    regular expression that finds nothing there is tried on the text as written as well.
    Input and output are checked alike.
    ``input`` and ``output`` say which checks refuse. The reason names the entry by where it
    was written (``"denylist.txt:3"``), not by what it matched, so a refusal never repeats a
    term a product keeps from its users.
    """

    name = "denylist"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        terms: Sequence[str] = (),
        patterns: Sequence[str] = (),
        input: bool = True,
        output: bool = True,
    ) -> None:
        entries = [] if path is None else read_entries(path)
        entries += [_term(t, f"terms[{i}]") for i, t in enumerate(_strings(terms, "terms"))]
        entries += [
            Entry(p, f"patterns[{i}]") for i, p in enumerate(_strings(patterns, "patterns"))
        ]
        if not entries:
            raise ConfigError(
                "guard 'denylist' has no entries: give path= (a denylist file), terms= or "
                "patterns=",
                value=path,
                source="guard_options['denylist']",
            )
        for entry in entries:
            _compiled(entry)
        self.entries = tuple(entries)
        self._pattern = re.compile(combined(self.entries), re.IGNORECASE)
        self._sieve = Sieve.of(self.entries)
        self.input = _switch(input, "input")
        self.output = _switch(output, "output")

    def refuses(self, text: str) -> GuardDecision:
        """Block ``text`` when an entry appears in it, naming the entry's place."""
        seen = normal(text)
        sieve = self._sieve
        if sieve is not None and sieve.clean(seen) and (seen == text or sieve.clean(text)):
            return GuardDecision.ALLOW  # what searched() would say, told without the alternation
        return self.searched(text, seen)

    def searched(self, text: str, seen: str) -> GuardDecision:
        """:meth:`refuses`, by the one pattern of all entries (``seen`` is ``normal(text)``)."""
        found = self._pattern.search(seen)
        if found is None:  # a term in another case or with marks (see loose)
            looser = loose(seen)
            found = None if looser == seen else self._pattern.search(looser)
        if found is None and seen != text:  # a pattern written for what the form drops
            found = self._pattern.search(text)
        if found is None or found.lastgroup is None:
            return GuardDecision.ALLOW
        entry = self.entries[int(found.lastgroup[1:])]
        return GuardDecision.block(f"matched the denylist entry at {entry.where}")

    def check_input(self, inp: GuardInput) -> GuardDecision:
        """Refuse an instruction part or a message of the request holding an entry."""
        return self.refuses(inp.text) if self.input else GuardDecision.ALLOW

    def check_output(self, message: Message) -> GuardDecision:
        """Refuse an answer holding an entry."""
        return self.refuses(message.text) if self.output else GuardDecision.ALLOW
