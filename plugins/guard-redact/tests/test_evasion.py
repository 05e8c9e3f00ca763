"""Secrets disguised with invisible and look-alike characters, or split between tool results,
are still redacted, over exactly the span they were written in, on input and output alike."""

from __future__ import annotations

import string
import unicodedata

from agentkit_guard_redact import RedactGuard
from agentkit_guard_redact._normal import SPACES as RUNS
from agentkit_guard_redact._normal import View
from agentkit_guard_redact._normal import fold
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import GuardChain
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import tool
from agentkit_core.plugin import GuardInput
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import frame_untrusted
from agentkit_core.plugin import iban_valid
from agentkit_core.plugin import luhn_valid
from agentkit_core.testing import ScriptedModel

KEY = "sk-proj-abcdefghijklmnopqrstuvwx"


def redacted(text: str, guard: RedactGuard | None = None) -> str:
    """``text`` as the guard sends it, on the input path (a user's message of a request)."""
    messages = (Message.system("You help."), Message.user(text))
    decision = (guard or RedactGuard(cache=0)).check_input(GuardInput(text, "", messages, 1))
    return decision.text if decision.action == "rewrite" else text


def answered(text: str, guard: RedactGuard | None = None) -> str:
    """``text`` as the guard leaves an answer, on the output path."""
    decision = (guard or RedactGuard(cache=0)).check_output(Message.assistant(text))
    return decision.text if decision.action == "rewrite" else text


def test_the_disguises_of_the_report_are_redacted_with_what_hides_them() -> None:
    cases = {
        "mail jane\u200b.doe@example.org now": "mail [redacted email] now",
        "mail jane.doe\uff20example.org now": "mail [redacted email] now",
        "card 4111\u00ad1111\u00ad1111\u00ad1111 now": "card [redacted card] now",
        f"key sk\u2010{KEY[3:]} now": "key [redacted api key] now",
        f"key {KEY[:10]}\u200b{KEY[10:]} now": "key [redacted api key] now",
        "call +44\u00a020\t7946\n0958 now": "call [redacted phone] now",
        "iban GB82\u2060WEST12345698765432 now": "iban [redacted iban] now",
    }
    for text, want in cases.items():
        assert redacted(text) == want, text
        assert answered(text) == want, text


def test_marks_on_characters_and_digits_of_other_scripts_hide_nothing() -> None:
    # a combining mark inside an address, a card number or a phone number, and a card in
    # Arabic-Indic or Devanagari digits (which NFKC keeps), were let through
    devanagari = "".join(chr(0x966 + int(d)) for d in "4111111111111111")
    arabic = "".join(chr(0x660 + int(d)) for d in "4111111111111111")
    cases = {
        "mail bo\u0301b@example.com now": "mail [redacted email] now",
        "mail b\u00f3b@ex\u00e4mple.com now": "mail [redacted email] now",
        "card 4111\u0301 1111 1111 1111 now": "card [redacted card] now",
        "card 4\u20e3111 1111 1111 1111 now": "card [redacted card] now",
        f"card {devanagari} now": "card [redacted card] now",
        f"card {arabic[:4]} {arabic[4:8]} {arabic[8:12]} {arabic[12:]} now": (
            "card [redacted card] now"
        ),
        "call +1 (555) 123\u0336-4567 now": "call [redacted phone] now",
        f"key s\u0301{KEY[1:]} now": "key [redacted api key] now",
        "caf\u00e9 r\u00e9sum\u00e9 na\u0131ve \u0301 \u0967\u0968": (
            "caf\u00e9 r\u00e9sum\u00e9 na\u0131ve \u0301 \u0967\u0968"
        ),
    }
    for text, want in cases.items():
        assert redacted(text) == want, ascii(text)
        assert answered(text) == want, ascii(text)


def test_invisible_characters_just_outside_a_match_stay() -> None:
    assert redacted("a \u200bjane@example.org\u200b b") == "a \u200b[redacted email]\u200b b"


# --------------------------------------------------------------------------- split secrets


@tool
def half(n: int) -> str:
    """Half of a key."""
    return f"the key is {KEY[:12]}" if n == 1 else f"{KEY[12:]} and that is all"


def calls(*ns: int) -> Message:
    return Message.assistant("", [ToolCall(f"c{n}", "half", f'{{"n": {n}}}') for n in ns])


async def tool_results(*steps: Message) -> list[list[str]]:
    """The tool results of each request a run of ``steps`` (then "done") sent (core's hooks
    only: no tool output framed)."""
    model = ScriptedModel([*steps, "done"])
    agent = Agent("a", model, "You help.", [half], guards=[RedactGuard()], hooks=Hooks())
    await agent.run("get the key")
    return [[m.text for m in r.messages if m.role == "tool"] for r in model.requests]


async def test_a_key_split_between_two_tool_results_of_a_turn_is_redacted_in_both() -> None:
    sent = await tool_results(calls(1, 2))
    assert sent[1] == ["the key is [redacted api key]", "[redacted api key] and that is all"]


async def test_a_key_split_over_two_turns_loses_its_later_part() -> None:
    """The earlier part went with the earlier request; the later one is held back."""
    sent = await tool_results(calls(1), calls(2))
    assert sent[2] == [f"the key is {KEY[:12]}", "[redacted api key] and that is all"]


def test_framed_tool_results_are_read_without_their_frames_and_keep_them() -> None:
    first, second = frame_untrusted(f"the key is {KEY[:12]}"), frame_untrusted(KEY[12:])
    call = Message.assistant("", [ToolCall("c1", "t"), ToolCall("c2", "t")])
    request = ModelRequest((call, Message.tool("c1", first), Message.tool("c2", second)))
    sent = GuardChain([RedactGuard()]).check_request(None, request).messages
    assert sent[1].text == first.replace(KEY[:12], "[redacted api key]")
    assert sent[2].text == second.replace(KEY[12:], "[redacted api key]")


def test_only_tool_results_are_read_together() -> None:
    messages = (
        Message.user(f"the key is {KEY[:12]}"),
        Message.tool("c1", f"{KEY[12:]} and that is all"),
    )
    request = ModelRequest(messages)
    assert GuardChain([RedactGuard()]).check_request(None, request) is request


# --------------------------------------------------------------------------- properties

ALNUM = string.ascii_letters + string.digits
DIGITS = st.text(string.digits, min_size=1, max_size=1)


def chars(alphabet: str, size: int, most: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=most or size)


def _luhn(body: str) -> str:
    return next(body + d for d in string.digits if luhn_valid(body + d))


def _iban(bban: str) -> str:
    return next(f"GB{c:02d}{bban}" for c in range(2, 99) if iban_valid(f"GB{c:02d}{bban}"))


def _grouped(text: str, sep: str) -> str:
    return sep.join(text[i : i + 4] for i in range(0, len(text), 4))


#: Positives of every detector, by kind, in the shapes people write them.
POSITIVES = {
    "api key": st.one_of(
        chars(ALNUM, 20, 40).map("sk-proj-".__add__),
        chars(ALNUM, 20, 40).map("sk-ant-".__add__),
        chars(ALNUM, 16, 30).map("sk_live_".__add__),
        chars(string.ascii_uppercase + string.digits, 16).map("AKIA".__add__),
        chars(ALNUM, 36, 40).map("ghp_".__add__),
        chars(ALNUM, 10, 30).map("xoxb-".__add__),
        chars(ALNUM, 35).map("AIza".__add__),
        st.tuples(chars(ALNUM, 8, 20), chars(ALNUM, 8, 20), chars(ALNUM, 8, 20)).map(
            lambda p: f"eyJ{p[0]}.eyJ{p[1]}.{p[2]}"
        ),
    ),
    "card": st.tuples(
        chars(string.digits, 14).map(lambda b: _luhn("4" + b)), st.sampled_from([" ", "-", ""])
    ).map(lambda c: _grouped(*c)),
    # letters among the digits, so no run of them is a card number too
    "iban": st.tuples(
        chars(string.ascii_uppercase, 4),
        chars(string.digits, 7),
        chars(string.ascii_uppercase, 1),
        chars(string.digits, 6),
        st.sampled_from([" ", ""]),
    ).map(lambda p: _grouped(_iban("".join(p[:4])), p[4])),
    "email": st.tuples(
        st.from_regex(r"[a-z][a-z0-9._]{0,10}[a-z0-9]", fullmatch=True),
        st.from_regex(r"[a-z]{1,8}", fullmatch=True),
        st.from_regex(r"[a-z]{2,6}", fullmatch=True),
    ).map(lambda p: f"{p[0]}@{p[1]}.{p[2]}"),
    "phone": st.one_of(
        st.tuples(chars(string.digits, 2), chars(string.digits, 4), chars(string.digits, 4)).map(
            lambda p: f"+44 {p[0]} {p[1]} {p[2]}"
        ),
        st.tuples(chars(string.digits, 3), chars(string.digits, 4)).map(
            lambda p: f"(555) {p[0]}-{p[1]}"
        ),
        st.tuples(chars(string.digits, 3), chars(string.digits, 4), st.sampled_from("- .")).map(
            lambda p: f"555{p[2]}{p[0]}{p[2]}{p[1]}"
        ),
        st.tuples(chars(string.digits, 4), chars(string.digits, 4)).map(
            lambda p: f"030 {p[0]} {p[1]}"
        ),
    ),
}
positives = st.sampled_from(sorted(POSITIVES)).flatmap(
    lambda kind: POSITIVES[kind].map(lambda text: (kind, text))
)

INVISIBLES = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u180e", "\u2063"]
DASHES = ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212", "\ufe63", "\uff0d"]
SPACES = ["\u00a0", "\t", "\n", "  ", "\r\n", "\u3000", "\u2009", " \u200b\t"]
#: Combining marks (nonspacing, enclosing) put on a character; the zeros of other scripts.
MARKS = ["\u0301", "\u0308", "\u0336", "\u0338", "\u20e3", "\u0327"]
OTHER_ZEROS = [0x660, 0x6F0, 0x966, 0x9E6, 0xE50, 0xFF10, 0x1D7CE]


@st.composite
def disguised(draw: st.DrawFn, text: str) -> str:
    """``text`` with look-alikes for some of its characters and invisible ones inside it."""
    out: list[str] = []
    for i, char in enumerate(text):
        if i and draw(st.integers(0, 3)) == 0:  # inside, never at an edge
            out.append(draw(st.sampled_from(INVISIBLES)))
        if char == " " and draw(st.booleans()):
            char = draw(st.sampled_from(SPACES))
        elif char == "-" and draw(st.booleans()):
            char = draw(st.sampled_from(DASHES))
        elif "!" <= char <= "~" and draw(st.integers(0, 3)) == 0:
            char = chr(ord(char) + 0xFEE0)  # its fullwidth form
        elif char.isdigit() and draw(st.integers(0, 3)) == 0:
            char = chr(draw(st.sampled_from(OTHER_ZEROS)) + int(char))  # another script's
        if char.isalnum() and draw(st.integers(0, 4)) == 0:
            char += draw(st.sampled_from(MARKS))  # a mark on it
        out.append(char)
    return "".join(out)


words = st.from_regex(r"[A-Za-z]{1,12}( [a-z]{1,9}){0,3}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(st.data(), positives, words, words)
def test_every_detector_catches_its_positives_however_disguised_on_input_and_output(
    data: st.DataObject, positive: tuple[str, str], before: str, after: str
) -> None:
    """The placeholder takes exactly the disguised span: the invisible characters in it too."""
    kind, plain = positive
    want = f"{before} [redacted {kind}] {after}"
    assert redacted(f"{before} {plain} {after}") == want  # the detector's own positive
    text = f"{before} {data.draw(disguised(plain))} {after}"
    assert redacted(text) == want, ascii(text)
    assert answered(text) == want, ascii(text)
    assert redacted(want) == want  # settled


@settings(max_examples=100, deadline=None)
@given(st.data(), positives, words, words, st.booleans())
def test_a_positive_split_between_tool_results_is_redacted_in_each(
    data: st.DataObject, positive: tuple[str, str], before: str, after: str, turns: bool
) -> None:
    """Results of one turn, or of two (a turn between them): each loses its part."""
    kind, plain = positive
    text = data.draw(disguised(plain))
    cut = data.draw(st.integers(1, len(text) - 1))
    first, second = f"{before} {text[:cut]}", f"{text[cut:]} {after}"
    call = Message.assistant("", [ToolCall("c1", "t")])
    between = (Message.tool("c1", first), call) if turns else (Message.tool("c1", first),)
    messages = (Message.system("s"), Message.user("u"), call, *between, Message.tool("c2", second))
    sent = GuardChain([RedactGuard(cache=0)]).check_request(None, ModelRequest(messages))
    tools = [m.text for m in sent.messages if m.role == "tool"]
    assert tools == [f"{before} [redacted {kind}]", f"[redacted {kind}] {after}"], ascii(text)


#: Ordinary writing: letters of many scripts, punctuation, dashes, emoji with joiners,
#: invisible characters and every kind of whitespace, but no digits and no ``@``.
ordinary = st.lists(
    st.sampled_from(
        [
            *"abcXYZ éüßçñ 你好，世界。 Привет ¡¿ …“”«» ,.;:!?'()[]/_+#%&*",
            *DASHES,
            *INVISIBLES,
            *SPACES,
            *["\U0001f469\u200d\U0001f4bb", "e\u0301", "\ufb01", "\uff41"],
        ]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(ordinary)
def test_ordinary_text_is_never_touched(text: str) -> None:
    assert redacted(text) == text
    assert answered(text) == text


def test_ordinary_numbers_written_with_unicode_are_not_secrets() -> None:
    for text in (
        "the meeting is on 2024\u201001\u201015 at 10:30",
        "read pages 10\u201320 and 31\u00a0\u2013\u00a040",
        "version 3.11.7, build 1234\u20135678",
        "commit 4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        "total: 1\u00a0234\u00a0567 units, \uff11\uff12\uff13 left",
        "the temperature fell to \u221212 \u2014 a record",
    ):
        assert redacted(text) == text, text
        assert answered(text) == text, text


# --------------------------------------------------------------------------- the view


def test_the_view_drops_every_invisible_character_and_reads_every_dash_as_a_hyphen() -> None:
    """Checked against the character database: a format character the view keeps is one a
    reader sees (number signs written before digits, the hieroglyph format controls)."""
    visible = {*range(0x600, 0x606), 0x6DD, 0x70F, 0x890, 0x891, 0x8E2, 0x110BD, 0x110CD}
    visible |= {*range(0x13430, 0x13440)}
    for point in range(0x110000):
        char = chr(point)
        category = unicodedata.category(char)
        if category == "Cf" and point not in visible:
            assert fold(char) == "", hex(point)
        elif category == "Pd":
            assert fold(char) == "-", hex(point)


@settings(max_examples=300, deadline=None)
@given(st.text("ab1@ \t\n\r\x00\x01\x0b\x1c\x7f\u200b\u00a0\uff21", max_size=16))
def test_the_view_of_a_plain_text_is_the_full_fold(text: str) -> None:
    """The shortcuts for printable ASCII, ASCII with controls and the rest give the one form."""
    assert View.of(text).text == RUNS.sub(" ", fold(text))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["ab", " ", "\u200b", "\uff21", "\ufb01", "e\u0301", "\t\n"])))
def test_each_character_of_the_view_comes_from_a_span_in_order(pieces: list[str]) -> None:
    """The spans of the view's characters go forward, and each reads as its character."""
    text = "".join(pieces)
    view = View.of(text)
    at = 0
    for i, char in enumerate(view.text):
        ((start, end),) = view.source(i, i + 1)
        assert at <= start < end <= len(text)
        assert char in View.of(text[start:end]).text
        at = start


_pieces = st.one_of(
    st.text(string.ascii_letters + string.digits + "@.- \u200b\uff20\u00ad", max_size=600),
    st.sampled_from(
        [KEY[:9], KEY[9:], "mail me at ann@", "example.org today", "4111 1111", " 1111 1111"]
    ),
)
_roles = st.sampled_from(["tool", "tool", "assistant", "user"])


@given(st.lists(st.tuples(_roles, _pieces), min_size=1, max_size=12), st.data())
@settings(max_examples=150, deadline=None)
def test_tool_results_read_incrementally_as_read_whole(
    turns: list[tuple[str, str]], data: st.DataObject
) -> None:
    """A guard that read a request's tool results before reads what one that never did reads.

    The guard remembers the text before the last tool result it read and, for a request that
    repeats those messages, reads only what is new; a request that does not (another run, a
    compacted transcript) is read whole. Either way every verdict is a fresh guard's.
    """
    messages: list[Message] = [Message.system("You help.")]
    kept = RedactGuard(cache=0)
    for role, text in turns:
        if data.draw(st.booleans(), label="fork"):  # another transcript: a rewritten message
            messages = [*messages[:-1], Message.user(text)]
        messages.append(Message.tool("c", text) if role == "tool" else Message(role, text))
        request = tuple(messages)
        inp = GuardInput(text, "", request, len(request) - 1)
        assert kept.check_input(inp) == RedactGuard(cache=0).check_input(inp)


#: Characters around the detectors' anchors: digits and their separators, ``@``, upper-case
#: letters, the API keys' prefixes' letters, and what folds into them.
NEAR = string.digits + "@+()-. _AKIZSGHxobpsrkjy" + "".join(INVISIBLES + DASHES + SPACES)
NEAR += "\uff10\uff11\uff20\uff21\uff4b\u2024\ufe6b"  # fullwidth 0, 1, @, A, k; one dot leader
pieces = st.one_of(
    words,
    positives.flatmap(lambda p: disguised(p[1])),
    st.text(NEAR, max_size=24),
)
near_texts = st.lists(pieces, max_size=4).flatmap(
    lambda parts: st.sampled_from([" ", ""]).map(lambda sep: sep.join(parts))
)


@settings(max_examples=300, deadline=None)
@given(near_texts, near_texts, near_texts)
def test_the_anchor_search_skips_only_texts_every_detector_would_pass(
    before: str, text: str, after: str
) -> None:
    """One search for any detector's anchor tells a text without a match; the redaction (of
    a tool result read between others too) is the one the detectors' own passes make."""
    quick, full = RedactGuard(cache=0), RedactGuard(cache=0)
    full._anchors = None
    assert quick._anchors is not None
    assert quick.redact(text, before, after) == full.redact(text, before, after)
    assert quick.redact(text) == full.redact(text)
