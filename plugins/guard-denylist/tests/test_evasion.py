"""Listed terms disguised with other whitespace, invisible or look-alike characters are still
refused, on input and output alike; text that only resembles them is not."""

from __future__ import annotations

import string
import unicodedata
from pathlib import Path

import pytest
from agentkit_guard_denylist import Denylist
from agentkit_guard_denylist._normal import normal
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import GuardBlocked
from agentkit_core import Message
from agentkit_core.plugin import GuardInput
from agentkit_core.testing import ScriptedModel


def actions(guard: Denylist, text: str) -> tuple[str, str]:
    """What the guard does with ``text`` as a request's message and as an answer."""
    messages = (Message.system("You help."), Message.user(text))
    request = guard.check_input(GuardInput(text, "", messages, 1)).action
    return request, guard.check_output(Message.assistant(text)).action


BLOCKED = ("block", "block")
ALLOWED = ("allow", "allow")


def test_the_disguises_of_the_report_are_refused_on_input_and_output() -> None:
    guard = Denylist(terms=["Project Nightjar", "night-jar"], patterns=[r"\bACME-\d{3,}\b"])
    for text in (
        "about Project\tNightjar",
        "about Project\nNightjar",
        "about Project\u00a0Nightjar",
        "about Project  Nightjar",
        "about Proj\u200bect Night\u200djar",
        "about Project \u2060Nightjar\ufeff",
        "about \uff30\uff52\uff4f\uff4a\uff45\uff43\uff54 Nightjar",  # fullwidth
        "about Project\r\n\t Nightjar",
        "about night\u2011jar",  # a non-breaking hyphen
        "about night\u00ad-jar",
        "ticket ACME\u2013123",
        "ticket ACME-\uff11\uff12\uff13",  # fullwidth digits
    ):
        assert actions(guard, text) == BLOCKED, ascii(text)


async def test_an_agent_refuses_a_disguised_term_in_the_request_and_in_the_answer() -> None:
    guard = Denylist(terms=["Project Nightjar"])
    with pytest.raises(GuardBlocked, match="blocked the input at message/0"):
        await Agent("a", ScriptedModel(["ok"]), guards=[guard]).run("Project  Nightjar?")
    with pytest.raises(GuardBlocked, match="blocked the output at turn/1"):
        await Agent("a", ScriptedModel(["Project  Nightjar"]), guards=[guard]).run("which?")


def test_terms_are_read_in_normal_form_and_one_that_is_only_invisible_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "denylist.txt"
    path.write_text("Project\u00a0\u00a0Nightjar\n\u200b\u2060\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"the term at .*denylist.txt:2 .* is empty"):
        Denylist(path)
    path.write_text("Project\u00a0\u00a0Nightjar\n", encoding="utf-8")
    assert actions(Denylist(path), "see Project Nightjar") == BLOCKED


def test_a_pattern_for_what_the_normal_form_drops_still_matches() -> None:
    guard = Denylist(patterns=["\u200b"])
    assert actions(guard, "a\u200bb") == BLOCKED
    assert actions(guard, "ab") == ALLOWED


def test_text_that_only_resembles_a_term_is_let_through() -> None:
    guard = Denylist(terms=["Project Nightjar", "the rapist"])
    for text in (
        "ProjectNightjar",
        "Project\u200bNightjar",  # nothing a reader sees between the words
        "Project-Nightjar",
        "Projects Nightjar",
        "Project Nightjars",
        "project of the nightjar",
        "the therapist",
    ):
        assert actions(guard, text) == ALLOWED, ascii(text)


# --------------------------------------------------------------------------- properties

INVISIBLES = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u180e", "\u2063"]
DASHES = ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212", "\ufe63", "\uff0d"]
SPACES = ["\u00a0", "\t", "\n", "  ", "\r\n", "\u3000", "\u2009", " \u200b\t", "\u202f"]

word = st.from_regex(r"[A-Za-z][a-z]{1,7}", fullmatch=True)
terms = st.tuples(st.lists(word, min_size=2, max_size=3), st.sampled_from([" ", "-"])).map(
    lambda t: t[1].join(t[0])
)


@st.composite
def disguised(draw: st.DrawFn, text: str) -> str:
    """``text`` with look-alikes for some characters and invisible ones inside it."""
    out: list[str] = []
    for i, char in enumerate(text):
        if i and draw(st.integers(0, 3)) == 0:
            out.append(draw(st.sampled_from(INVISIBLES)))
        if char == " ":
            char = draw(st.sampled_from([" ", *SPACES]))
        elif char == "-":
            char = draw(st.sampled_from(["-", *DASHES]))
        elif draw(st.integers(0, 3)) == 0:
            char = chr(ord(char) + 0xFEE0)  # its fullwidth form
        elif draw(st.booleans()):
            char = char.swapcase()
        out.append(char)
    return "".join(out)


prose = st.from_regex(r"([0-9]{1,3}|[a-z]{1,9})( [a-z]{1,9}){0,3}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(st.data(), terms, prose, prose, st.booleans())
def test_a_term_however_disguised_is_refused_on_input_and_output(
    data: st.DataObject, term: str, before: str, after: str, as_pattern: bool
) -> None:
    """As a term, and as a regular expression with ``\\s+`` and ``-`` between its words."""
    if as_pattern:
        words = term.replace("-", " ").split()
        guard = Denylist(patterns=[r"\b" + (r"\s+" if " " in term else "-").join(words) + r"\b"])
    else:
        guard = Denylist(terms=[term])
    assert actions(guard, f"{before} {term} {after}") == BLOCKED  # the term as written
    text = f"{before} {data.draw(disguised(term))} {after}"
    assert actions(guard, text) == BLOCKED, ascii(text)


#: Ordinary writing: letters of many scripts, punctuation, dashes, emoji with joiners,
#: invisible characters and every kind of whitespace.
ordinary = st.lists(
    st.sampled_from(
        [
            *"abcXYZ éüßçñ 你好，世界。 Привет ¡¿ …“”«» ,.;:!?'()[]/_+#%&*0123",
            *DASHES,
            *INVISIBLES,
            *SPACES,
            *["\U0001f469\u200d\U0001f4bb", "e\u0301", "\ufb01", "\uff41"],
        ]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(ordinary, st.sampled_from(["Project Nightjar", "night-jar", "cat", "Über Ding"]))
def test_ordinary_text_without_the_term_is_let_through(text: str, term: str) -> None:
    assert actions(Denylist(terms=[term]), text) == ALLOWED


@settings(max_examples=100, deadline=None)
@given(terms, st.sampled_from(["", "_", "x", "\u200b", "1"]))
def test_the_words_of_a_term_joined_otherwise_are_not_the_term(term: str, joint: str) -> None:
    words = term.replace("-", " ").split()
    assert actions(Denylist(terms=[term]), joint.join(words)) == ALLOWED


def test_the_normal_form_drops_invisible_characters_and_reads_dashes_as_hyphens() -> None:
    """Checked against the character database: a format character kept is one a reader sees
    (number signs written before digits, the hieroglyph format controls)."""
    visible = {*range(0x600, 0x606), 0x6DD, 0x70F, 0x890, 0x891, 0x8E2, 0x110BD, 0x110CD}
    visible |= {*range(0x13430, 0x13440)}
    for point in range(0x110000):
        char = chr(point)
        category = unicodedata.category(char)
        if category == "Cf" and point not in visible:
            assert normal(f"a{char}b") == "ab", hex(point)
        elif category == "Pd":
            assert normal(char) == "-", hex(point)


@given(st.text(string.printable + "\u00a0\u200b\u3000\uff21", max_size=40))
def test_the_normal_form_is_settled(text: str) -> None:
    once = normal(text)
    assert normal(once) == once


def test_a_term_in_another_case_or_with_marks_on_its_letters_is_refused() -> None:
    # "STRASSE" is "Straße" in capitals, and a mark put on a letter ("K̶ill") left the word
    # readable: both were let through, as was "ISTANBUL" for "İstanbul" read loosely.
    guard = Denylist(terms=["Straße", "kill", "İstanbul", "Project Nightjar"])
    for text in (
        "the STRASSE",
        "the strasse",
        "the ISTANBUL office",
        "K\u0336ill it",  # a combining long stroke overlay
        "Ki\u0301ll it",
        "kil\u0338l it",
        "k\u20e3ill it",  # an enclosing keycap
        "Project \u0301 Nightjar",  # a mark standing alone between the words
    ):
        assert actions(guard, text) == BLOCKED, ascii(text)
    for text in ("the strase", "skill", "killer", "\u1e31"):  # other words stay other
        assert actions(guard, text) == ALLOWED, ascii(text)


def test_a_term_of_marks_alone_is_refused_as_empty() -> None:
    with pytest.raises(ConfigError, match=r"terms\[0\] .* combining marks and spaces"):
        Denylist(terms=["\u0301\u20e3"])


MARKS = ["\u0301", "\u0308", "\u0336", "\u0338", "\u20e3", "\u0327", "\u0489"]


@settings(max_examples=150, deadline=None)
@given(st.data(), terms, prose, prose)
def test_a_term_in_capitals_or_with_marks_anywhere_is_refused(
    data: st.DataObject, term: str, before: str, after: str
) -> None:
    """Full case folding and no combining marks: the upper case of ``ß`` is ``SS``."""
    term = term.replace("s", data.draw(st.sampled_from(["s", "ß", "ſ"])), 1)
    guard = Denylist(terms=[term])
    marked = "".join(c + data.draw(st.sampled_from(["", *MARKS])) for c in term)
    for written in (term.upper(), term.casefold(), marked, marked.upper()):
        text = f"{before} {written} {after}"
        assert actions(guard, text) == BLOCKED, ascii(text)
