"""Matchers: what a rule asks of one argument of a call.

Each answers True, False or None (*cannot tell*: the argument is missing, of another type, a
path that cannot be resolved, a command that cannot be read). An allow rule matches only on
True; a deny or ask rule that cannot tell turns the call into a question for a person, so a
call nobody can read is never allowed by a rule and never slips past one. ``strict`` says which
rule reads: allow rules read strictly, deny and ask rules leniently (see ``_shell``).
"""

from __future__ import annotations

import abc
import json
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import ClassVar

from ._shell import Segment


class Matcher(abc.ABC):
    """What a rule asks of one argument's value."""

    #: The matcher's key in a policy file (``prefix``, ``within``, ``equals``, ``regex``).
    kind: ClassVar[str]
    #: Whether the argument is split into a shell command's segments before it is tested.
    splits: ClassVar[bool] = False

    @abc.abstractmethod
    def test(self, value: Any, strict: bool) -> bool | None:
        """Whether ``value`` matches: True, False, or None when it cannot tell."""

    def bind(self, cwd: str) -> Matcher:
        """The matcher with relative paths resolved against ``cwd`` (most have none)."""
        return self

    @abc.abstractmethod
    def describe(self) -> Any:
        """The matcher's values as a policy file writes them."""


def invisible(text: str) -> str | None:
    """The first character of ``text`` that shows nothing and is no blank, or None.

    A format character (zero-width space or joiner, direction mark, byte order mark, tag) or a
    control other than whitespace: pasted into a rule, it makes a word no command holds, so a
    deny rule that reads ``rm`` on the page would never match ``rm``.
    """
    for char in text:
        category = unicodedata.category(char)
        if category == "Cf" or (category == "Cc" and not char.isspace()):
            return char
    return None


def _texts(kind: str, values: Sequence[Any], *, visible: bool = True) -> tuple[str, ...]:
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise TypeError(f"{kind} takes one or more non-empty strings, got {list(values)!r}")
    for value in values if visible else ():
        char = invisible(value)
        if char is not None:
            raise TypeError(
                f"{kind} {value!r} holds the invisible character U+{ord(char):04X}; remove it"
            )
    return tuple(values)


@dataclass(frozen=True, init=False)
class Prefix(Matcher):
    """A shell command's leading words: ``Prefix("git status", "git diff")``.

    Word by word, so ``git status`` matches ``git status -s`` and not ``git statusx``; each
    simple command of a line (``a && b``) is decided on its own.
    """

    kind: ClassVar[str] = "prefix"
    splits: ClassVar[bool] = True
    prefixes: tuple[str, ...]
    _words: tuple[tuple[str, ...], ...] = field(repr=False, compare=False)

    def __init__(self, *prefixes: str) -> None:
        object.__setattr__(self, "prefixes", _texts(self.kind, prefixes))
        object.__setattr__(self, "_words", tuple(tuple(p.split()) for p in prefixes))

    def test(self, value: Any, strict: bool) -> bool | None:
        if not isinstance(value, Segment):
            return None
        if strict:
            return any(value.starts_with(p) for p in self._words)
        reading = value.lenient()
        if any(reading.begins(p) for p in self._words):
            return True
        return None if reading.opaque else False

    def describe(self) -> Any:
        return list(self.prefixes)


@dataclass(frozen=True, init=False)
class Within(Matcher):
    """A path argument confined to directory trees: ``Within(".", "/tmp/build")``.

    The path is resolved as the file system would (relative to the policy's working
    directory, ``..`` and every symbolic link followed) and must then lie inside one of the
    trees, resolved the same way. A list of paths must lie inside as a whole. A path that
    cannot be resolved (not a string, empty, a NUL byte, ``~``) is *cannot tell*.
    """

    kind: ClassVar[str] = "within"
    dirs: tuple[str, ...]
    _roots: tuple[str, ...] = field(repr=False, compare=False)
    _cwd: str = field(repr=False, compare=False)

    def __init__(self, *dirs: str, cwd: str | None = None) -> None:
        object.__setattr__(self, "dirs", _texts(self.kind, dirs))
        base = os.path.realpath(cwd if cwd is not None else os.getcwd())
        object.__setattr__(self, "_cwd", base)
        roots = tuple(os.path.realpath(os.path.join(base, os.path.expanduser(d))) for d in dirs)
        object.__setattr__(self, "_roots", roots)

    def bind(self, cwd: str) -> Matcher:
        return Within(*self.dirs, cwd=cwd)

    def test(self, value: Any, strict: bool) -> bool | None:
        paths = value if isinstance(value, list) else [value]
        if not paths:
            return None
        found = [self._inside(p) for p in paths]
        if strict:
            return None if None in found else all(found)
        return True if True in found else (None if None in found else False)

    def _inside(self, path: Any) -> bool | None:
        if not isinstance(path, str) or not path or "\x00" in path or path.startswith("~"):
            return None
        try:
            real = os.path.realpath(os.path.join(self._cwd, path))
        except (OSError, ValueError):
            return None
        return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self._roots)

    def describe(self) -> Any:
        return list(self.dirs)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


#: The words a tool's loose reading takes for a boolean (pydantic's lax mode), lower-cased.
_WORDS = {
    True: frozenset({"1", "on", "t", "true", "y", "yes"}),
    False: frozenset({"0", "off", "f", "false", "n", "no"}),
}


def _number(text: str) -> int | float | None:
    """The number a loose reader takes ``text`` for (``" 1_000 "``, ``"1e3"``, ``"+5.0"``)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number else None  # NaN is no value


def _loosely(rule: Any, value: Any) -> bool:
    """Whether a tool reading ``value`` loosely may take it for the rule's ``rule``.

    A tool validates its arguments in lax mode (``@tool`` does, through pydantic): the int
    1000000 also arrives as ``1000000.0``, ``1e6``, ``"1000000"`` or ``" 1000000 "``, and true
    as ``1``, ``"1"``, ``"yes"`` or ``"on"``. A string is read as written. Lists and objects
    hold when each element does, so the reading goes only as deep as the rule's value.
    """
    if isinstance(rule, bool):
        if isinstance(value, str):
            return value.lower() in _WORDS[rule]
        return isinstance(value, int | float) and value == rule
    if isinstance(rule, int | float):
        if isinstance(value, str):
            value = _number(value)
        return isinstance(value, int | float) and value == rule
    if isinstance(rule, list):
        return (
            isinstance(value, list)
            and len(value) == len(rule)
            and all(_loosely(r, v) for r, v in zip(rule, value, strict=True))
        )
    if isinstance(rule, dict):
        return (
            isinstance(value, dict)
            and value.keys() == rule.keys()
            and all(_loosely(r, value[k]) for k, r in rule.items())
        )
    return type(value) is type(rule) and value == rule


@dataclass(frozen=True, init=False)
class Equals(Matcher):
    """An argument equal to one of the values.

    An allow rule compares them as JSON (so ``1``, ``1.0`` and ``true`` differ); a deny or ask
    rule also matches every value a tool may read loosely as one of them (``"1000000"`` and
    ``1e6`` for ``1000000``, ``"yes"`` for ``true``: see :func:`_loosely`).
    """

    kind: ClassVar[str] = "equals"
    values: tuple[Any, ...]
    _canon: frozenset[str] = field(repr=False, compare=False)

    def __init__(self, *values: Any) -> None:
        if not values:
            raise TypeError("equals takes one or more values")
        try:
            canon = frozenset(_canonical(v) for v in values)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"equals takes JSON values, got {list(values)!r} ({exc})") from None
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "_canon", canon)

    def test(self, value: Any, strict: bool) -> bool | None:
        try:
            if _canonical(value) in self._canon:
                return True
        except (TypeError, ValueError):
            return None
        return not strict and any(_loosely(rule, value) for rule in self.values)

    def describe(self) -> Any:
        return list(self.values)


@dataclass(frozen=True, init=False)
class Regex(Matcher):
    """A string argument matching one of the patterns whole (``re.fullmatch``).

    A deny or ask rule reads a value of several lines whole: its ``.`` matches a newline too
    (``re.DOTALL``), so ``rm .*`` holds for ``rm -rf /`` followed by a newline and more. An
    allow rule's ``.`` stops at a newline, so ``git status.*`` never allows a second line.
    """

    kind: ClassVar[str] = "regex"
    patterns: tuple[str, ...]
    _compiled: tuple[re.Pattern[str], ...] = field(repr=False, compare=False)
    _lenient: tuple[re.Pattern[str], ...] = field(repr=False, compare=False)

    def __init__(self, *patterns: str) -> None:
        texts = _texts(self.kind, patterns, visible=False)  # a pattern may seek such a character
        try:
            compiled = tuple(re.compile(p) for p in texts)
        except re.error as exc:
            raise TypeError(f"regex {exc.pattern!r} does not compile: {exc}") from None
        object.__setattr__(self, "patterns", texts)
        object.__setattr__(self, "_compiled", compiled)
        object.__setattr__(self, "_lenient", tuple(re.compile(p, re.DOTALL) for p in texts))

    def test(self, value: Any, strict: bool) -> bool | None:
        if not isinstance(value, str):
            return None
        return any(p.fullmatch(value) for p in (self._compiled if strict else self._lenient))

    def describe(self) -> Any:
        return list(self.patterns)


#: Matcher kinds by their key in a policy file.
MATCHERS: dict[str, type[Matcher]] = {m.kind: m for m in (Equals, Prefix, Regex, Within)}
