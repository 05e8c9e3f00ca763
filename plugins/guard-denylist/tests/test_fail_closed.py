"""Malformed denylist options fail closed: refused where they are given, naming the value, never
read as a weaker list (a string as its characters, a table as its keys)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agentkit_guard_denylist
import pytest
from agentkit_guard_denylist import Denylist
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import GuardBlocked
from agentkit_core import Kit
from agentkit_core import PluginManager
from agentkit_core.plugin import GuardInput
from agentkit_core.testing import ScriptedModel


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_guard_denylist, name="denylist")
    return pm


def refused(guard: Denylist, text: str) -> bool:
    return guard.check_input(GuardInput(text)).action == "block"


@pytest.mark.parametrize("key", ["terms", "patterns"])
def test_one_string_in_code_is_refused_not_read_as_its_characters(key: str) -> None:
    # terms="rm" was the terms "r" and "m": whole words that "rm -rf /" does not hold.
    with pytest.raises(ConfigError) as err:
        Denylist(**{key: "rm"})
    assert str(err.value) == (
        f"guard 'denylist': {key}= must be a list of strings, got 'rm'; write {key}=['rm']"
    )
    assert err.value.source == f"guard_options['denylist']['{key}']"


@pytest.mark.parametrize("value", [{"rm": True}, b"rm", None, [b"rm"], ["rm", 1], 7])
def test_other_shapes_in_code_are_refused(value: Any) -> None:
    for key in ("terms", "patterns"):
        with pytest.raises(ConfigError, match=rf"^guard 'denylist': {key}= must be a list of "):
            Denylist(**{key: value})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"terms": "rm"}, r"\['terms'\] .* must be a list of strings, got 'rm' \(str\)"),
        ({"patterns": "rm"}, r"\['patterns'\] .* must be a list of strings, got 'rm' \(str\)"),
        ({"terms": ["rm"], "input": "false"}, r"\['input'\] .* must be true or false, got 'false'"),
        ({"terms": ["rm"], "output": 0}, r"\['output'\] .* must be true or false, got 0 \(int\)"),
        ({"terms": ["rm"], "input": None}, r"\['input'\] .* must be true or false, got None"),
        ({"term": ["rm"]}, r"unknown key 'term' .*; did you mean 'terms'\?"),
        ({"Terms": ["rm"]}, r"unknown key 'Terms' .*; did you mean 'terms'\?"),
        ({"terms": []}, r"has no entries"),
        ({"terms": ["\u200b\u2060"]}, r"is empty once its invisible characters"),
    ],
)
def test_a_kit_refuses_malformed_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Kit(
            model=ScriptedModel(["ok"]),
            guards=["denylist"],
            guard_options={"denylist": options},
            manager=manager(),
        )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('terms = "rm"', r"\['terms'\] .* must be a list of strings, got 'rm' \(str\)"),
        ('terms = ["rm", "\\u200b"]', r"the term at terms\[1\] \('\\u200b'\) is empty"),
        ('patterns = ["(unclosed"]', r"the entry at patterns\[0\] is not a regular expression"),
        ("input = 0", r"\['input'\] .* must be true or false, got 0 \(int\)"),
    ],
)
def test_a_kit_file_with_malformed_options_names_the_file(
    tmp_path: Path, table: str, message: str
) -> None:
    path = tmp_path / "agentkit.toml"
    path.write_text(
        f'[kit]\nmodel = "test"\nguards = ["denylist"]\n[kit.guard_options.denylist]\n{table}\n'
    )
    with pytest.raises(ConfigError, match=message) as err:
        Kit.from_file(path, manager=manager())
    assert str(err.value).endswith(f" (building the kit read from {path})")


async def test_the_term_given_as_a_list_refuses_the_command_in_a_run() -> None:
    kit = Kit(
        model=ScriptedModel(["ok"]),
        guards=["denylist"],
        guard_options={"denylist": {"terms": ["rm"]}},
        manager=manager(),
    )
    with pytest.raises(GuardBlocked, match=r"matched the denylist entry at terms\[0\]"):
        await Agent.from_config(kit.config()).run("please run rm -rf /")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_file_saved_with_a_byte_order_mark_keeps_its_first_pattern(
    tmp_path: Path, newline: str
) -> None:
    # read as text, the mark made the first line "\ufeffre:..." a literal term, and ACME-123
    # went through
    path = tmp_path / "denylist.txt"
    lines = ["re:\\bACME-\\d{3,}\\b", "# codenames", "Nightjar", ""]
    path.write_bytes(b"\xef\xbb\xbf" + newline.join(lines).encode())
    guard = Denylist(path)
    assert [(e.where, e.pattern) for e in guard.entries] == [
        (f"{path}:1", r"\bACME-\d{3,}\b"),
        (f"{path}:3", r"\bNightjar\b"),
    ]
    decision = guard.check_input(GuardInput("see ticket ACME-123"))
    assert (decision.action, decision.reason) == (
        "block",
        f"matched the denylist entry at {path}:1",
    )


# ---------------------------------------------------------------------- properties


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1))
def test_a_string_is_never_a_list_of_entries(text: str) -> None:
    for key in ("terms", "patterns"):
        with pytest.raises(ConfigError, match=rf"{key}= must be a list of strings"):
            Denylist(**{key: text})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5))
def test_every_term_taken_is_refused_where_it_is_written(terms: list[str]) -> None:
    """A list of terms is refused whole (a term that is only invisible characters) or each of
    its terms, written alone, is refused: the sieve and the normal form lose none."""
    try:
        guard = Denylist(terms=terms)
    except ConfigError as err:
        assert "is empty once its invisible characters, combining marks and spaces" in str(err)
        return
    for term in terms:
        assert refused(guard, term), term
        assert refused(guard, f"say {term} now"), term


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from(["false", "0", "no", "", "rm", "re:rm"]),
    st.lists(st.sampled_from(["rm", "Nightjar", "", "\u200b", "(", "a+"]), max_size=3),
    st.dictionaries(st.sampled_from(["rm", "x"]), st.booleans(), max_size=2),
)
_KEYS = st.sampled_from(["terms", "patterns", "input", "output", "term", "Input", "pattern"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_kit_options_build_the_guard_they_say_or_are_refused(options: dict[str, Any]) -> None:
    """Through the kit, options are refused, or the guard has exactly the switches given and
    refuses every term given: nothing is read as a weaker setting."""
    try:
        kit = Kit(
            model=ScriptedModel(["ok"]),
            guards=["denylist"],
            guard_options={"denylist": options},
            manager=manager(),
        )
    except ConfigError:
        return
    chain = kit.config().guards
    assert chain is not None
    (entry,) = chain.guards
    guard = entry.guard
    assert isinstance(guard, Denylist)
    assert set(options) <= {"terms", "patterns", "input", "output"}
    assert guard.input is options.get("input", True)
    assert guard.output is options.get("output", True)
    assert len(guard.entries) == len(options.get("terms", ())) + len(options.get("patterns", ()))
    if guard.input:
        for term in options.get("terms", ()):
            assert refused(guard, term)


@pytest.mark.parametrize("line", ["re:", "re:   ", "re:a*", "re:x|", "re:^", "re:(?:)"])
def test_a_file_line_whose_pattern_matches_the_empty_text_is_refused(
    tmp_path: Path, line: str
) -> None:
    # "re:" with nothing after it was the pattern "", which matched, and refused, every text.
    path = tmp_path / "denylist.txt"
    path.write_text(f"secret\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="matches the empty text and so every text") as err:
        Denylist(path)
    assert err.value.source == f"{path}:2"


@pytest.mark.parametrize("pattern", ["", "a*", "b?|c", "$"])
def test_a_pattern_in_code_that_matches_the_empty_text_is_refused(pattern: str) -> None:
    with pytest.raises(ConfigError, match=r"entry at patterns\[1\] is .*every text") as err:
        Denylist(patterns=[r"\bok\b", pattern])
    assert err.value.source == "patterns[1]"


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"[a-z]{0,3}[*?]?(\|[a-z]{0,2}[*?]?)?", fullmatch=True))
def test_a_taken_pattern_never_refuses_every_text(pattern: str) -> None:
    # a pattern is either refused when built, or lets some text through
    try:
        guard = Denylist(patterns=[pattern])
    except ConfigError as exc:
        assert "every text" in str(exc) or "not a regular expression" in str(exc)
        return
    assert not refused(guard, "0")


@pytest.mark.parametrize("value", [None, 0, 1, "no", "false", []])
@pytest.mark.parametrize("key", ["input", "output"])
def test_a_switch_in_code_that_is_not_true_or_false_is_refused(key: str, value: Any) -> None:
    # input=None turned the input check off: a request holding a term went through
    with pytest.raises(ConfigError, match=rf"^guard 'denylist': {key}=.* must be True or False"):
        Denylist(terms=["rm"], **{key: value})
    guard = Denylist(terms=["rm"])
    assert refused(guard, "rm")


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.booleans(), st.none(), st.integers(-1, 2), st.text(max_size=3)))
def test_a_guard_built_in_code_checks_input_exactly_when_told(value: Any) -> None:
    try:
        guard = Denylist(terms=["rm"], input=value)
    except ConfigError:
        assert not isinstance(value, bool)
        return
    assert refused(guard, "rm") is value
