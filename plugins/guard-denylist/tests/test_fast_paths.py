"""The shortcuts of the denylist say what the whole work says, on any text.

``normal`` skips NFKC and the dash rewrite for ASCII, and the guard asks a sieve (lower-cased
terms found by one search, the other entries searched one by one) before its combined pattern:
both are held here to the full path, on generated text full of the characters that fold,
vanish, or equal others ignoring case.
"""

from __future__ import annotations

import string

from agentkit_guard_denylist import Denylist
from agentkit_guard_denylist._guard import Sieve
from agentkit_guard_denylist._normal import folded
from agentkit_guard_denylist._normal import normal
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

#: Characters a shortcut could get wrong: ASCII controls and whitespace, letters that equal an
#: ASCII one ignoring case or in NFKC (Kelvin sign, long s, dotless and dotted i, fullwidth),
#: invisible characters, dashes, sigmas, ligatures.
ODD = "\x00\x01\x0b\x0c\x1c\x1f\x7f\t\n\r \u00a0\u200b\u00ad\u2010\u2212\u212a\u017f\u0131\u0130"
ODD += "\uff21\uff4b\u03a3\u03c3\u03c2\u00df\ufb01\u0301"
texts = st.lists(
    st.one_of(
        st.text(string.printable + ODD, max_size=12),
        st.sampled_from(["ACME-123", "acme-9999", "Nightjar", "night-jar", "KELVIN", "fish"]),
    ),
    max_size=8,
).map(" ".join)
TERMS = ["Project Nightjar", "night-jar", "kelvin", "Straße", "ınk", "fi", "σ", "-x-", "a.b"]
PATTERNS = [r"\bACME-\d{3,}\b", r"k\s+e", r"(?:sk|pk)-[a-z]{3}", r"^fish$", r"\x01", r"\n\n"]


@settings(max_examples=400, deadline=None)
@given(texts)
@example("a\x01b  c\n\td\x7f")
@example("\x01 \x1f")
@example("\n")
def test_the_ascii_normal_form_is_the_full_ones(text: str) -> None:
    assert normal(text) == folded(text)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(TERMS), max_size=4),
    st.lists(st.sampled_from(PATTERNS), max_size=3),
    texts,
)
@example(["kelvin"], [], "\u212aelvin")
@example([], [r"\n\n"], "a\n\nb")
@example(["night-jar"], [], "night\x01-jar")
def test_the_sieve_lets_through_only_what_the_pattern_would(
    terms: list[str], patterns: list[str], text: str
) -> None:
    if not terms and not patterns:
        terms = ["fish"]
    guard = Denylist(terms=terms, patterns=patterns)
    assert guard.refuses(text) == guard.searched(text, folded(text))


def test_a_list_with_a_group_of_its_own_is_always_searched_whole() -> None:
    assert Sieve.of(Denylist(patterns=[r"(a|b)c"]).entries) is None
    assert Sieve.of(Denylist(terms=["a"], patterns=[r"b+"]).entries) is not None
