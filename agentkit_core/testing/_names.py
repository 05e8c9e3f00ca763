r"""Hostile names for the store suites: strings that differ, but could meet in a backend.

A store keys its data by names it is given (a memory scope and title, a session id, a run id
and namespace). Two different names must never see each other's data, and a name must always
find its own, whatever the strings are: or the store refuses the name with a
``ConfigError``/``StorageError``. :data:`name_pairs` draws two different names built from
pieces that collide somewhere: SQL ``LIKE`` wildcards and escapes, case and case folding,
NFC/NFD and compatibility forms, zero-width characters, path separators and dot segments,
trailing dots and blanks, a NUL, lone surrogates (``\udcc3\udca9`` is the file-system
escape of the bytes of ``é``), names that are prefixes of each other, long names and the
empty name. The suites put a fresh tag before both, so the pair relates as the raw names do
(``tag+'run1'`` is a prefix of ``tag+'run10'``) while no two examples share a name.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Coroutine
from typing import TypeVar

from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import strategies as st

#: An async test of a suite, as ``given`` takes it.
Test = TypeVar("Test", bound=Callable[..., Coroutine[object, object, None]])

#: The health checks a suite's ``@given`` test sets aside: its store fixture is shared by the
#: examples (each uses names of its own), and the suite runs once per backend subclass.
SUITE_CHECKS = [
    HealthCheck.function_scoped_fixture,
    HealthCheck.too_slow,
    HealthCheck.differing_executors,
]

#: Pieces that differ as strings but meet in some backend, file system or normalisation.
PIECES = (
    "",
    "Alice",
    "alice",
    "ALICE",
    "é",  # NFC
    "e\u0301",  # NFD of it
    "ｅ",  # fullwidth e
    "\u200d",  # zero-width joiner
    "\u200b",  # zero-width space
    "ß",
    "ss",
    "İ",
    "i\u0307",
    "%",
    "_",
    "\\",
    "\\%",
    "*",
    "?",
    "[a]",
    "/",
    "a/b",
    "a\\b",
    ".",
    "..",
    "../x",
    "a.",
    "a ",
    " ",
    "\t",
    "\x00",
    "\ud800",
    "\udcc3\udca9",
    "%2F",
    "%25",
    "run1",
    "run10",
    "x" * 120,
    "é" * 128,  # 256 bytes of UTF-8
)

#: One hostile name: a piece, a few pieces joined, or any short text.
names = st.one_of(
    st.sampled_from(PIECES),
    st.lists(st.sampled_from(PIECES), min_size=2, max_size=3).map("".join),
    st.text(max_size=6),
)

#: Two different hostile names.
name_pairs = st.tuples(names, names).filter(lambda pair: pair[0] != pair[1])

#: Pairs every suite tries first, each once known to meet in some backend: a prefix, a LIKE
#: wildcard, case, NFC/NFD, the file-system escape of a name's bytes, lone surrogates, a
#: character beside its surrogate pair (JSON escapes both alike), a NUL,
#: the empty name.
PAIRS = (
    ("run1", "run10"),
    ("a%", "ab"),
    ("Alice", "alice"),
    ("é", "e\u0301"),
    ("é", "\udcc3\udca9"),
    ("\ud800", "\udcc3\udca9"),
    ("\U000100c3", "\ud800\udcc3"),  # one character, and its surrogate pair as two
    ("a\x00b", "a\x00c"),
    ("a\x00b", "a"),
    ("", "Alice"),
)


def given_name_pairs(test: Test) -> Test:
    """``test`` given ``pair``: each of :data:`PAIRS`, then pairs :data:`name_pairs` draws."""
    for pair in PAIRS:
        test = example(pair=pair)(test)
    return given(pair=name_pairs)(test)  # type: ignore[return-value]  # given keeps the signature
