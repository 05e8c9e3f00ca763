"""The incremental partial JSON parser: cuts anywhere, chunk boundaries, errors, live tree."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core.plugin import ParseError
from agentkit_core.plugin import PartialJSONParser
from agentkit_core.plugin import partial_json

_ABSENT = object()

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8"), max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
styles = st.fixed_dictionaries({"ensure_ascii": st.booleans(), "indent": st.none() | st.just(1)})


def consistent(partial: Any, final: Any) -> bool:
    """Whether ``partial`` is what a cut of ``final``'s text may show."""
    if isinstance(final, dict):
        return isinstance(partial, dict) and all(
            k in final and consistent(v, final[k]) for k, v in partial.items()
        )
    if isinstance(final, list):
        if not isinstance(partial, list) or len(partial) > len(final):
            return False
        done = all(p == f and type(p) is type(f) for p, f in zip(partial[:-1], final, strict=False))
        return done and (not partial or consistent(partial[-1], final[len(partial) - 1]))
    if isinstance(final, str):
        return isinstance(partial, str) and final.startswith(partial)
    return partial == final and type(partial) is type(final)


@settings(max_examples=40, deadline=None)
@given(json_values, styles, st.lists(st.integers(1, 9), min_size=1, max_size=8))
def test_generated_documents_parse_in_any_chunking(
    value: Any, style: Any, sizes: list[int]
) -> None:
    text = json.dumps(value, **style)
    parser = PartialJSONParser()
    pos = 0
    i = 0
    while pos < len(text):
        step = sizes[i % len(sizes)]
        partial = parser.feed(text[pos : pos + step])
        pos += step
        i += 1
        assert partial is None or consistent(partial, value), (text[:pos], partial)
    assert parser.finish() == value


@settings(max_examples=25, deadline=None)
@given(json_values.filter(lambda v: isinstance(v, (dict, list))), styles)
def test_every_cut_of_a_generated_document_is_consistent(value: Any, style: Any) -> None:
    text = json.dumps(value, **style)
    for cut in range(len(text) + 1):
        partial = partial_json(text[:cut])
        assert partial is None or consistent(partial, value), (text[:cut], partial)
    assert partial == value


@pytest.mark.parametrize(
    ("buffer", "expected"),
    [
        ('{"a": "x\\', {"a": "x"}),  # inside an escape
        ('{"a": "x\\u00', {"a": "x"}),  # inside a \u sequence
        ('{"a": "x\\u00e9', {"a": "xé"}),
        ('{"a": "\\ud83d', {"a": ""}),  # a high surrogate waits for its pair
        ('{"a": "\\ud83d\\ude', {"a": ""}),
        ('{"a": "\\ud83d\\ude00', {"a": "😀"}),
        ('{"a": 12', {}),  # a number may still grow
        ('{"a": 12.5e', {}),
        ('{"a": 12,', {"a": 12}),
        ('{"a": tru', {}),
        ('{"a": true', {"a": True}),
        ('{"ke', {}),  # a cut key
        ('{"key"', {}),  # a key without its value
        ('{"key":', {}),
        ('{"key": "', {"key": ""}),
        ('{"a": [1, {"b": [', {"a": [1, {"b": []}]}),
        ("[", []),
        ("", None),
        ("  ", None),
    ],
)
def test_a_cut_shows_what_the_contract_says(buffer: str, expected: Any) -> None:
    assert partial_json(buffer) == expected


def test_every_split_of_escapes_and_surrogates_gives_the_same_value() -> None:
    text = '{"s": "a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\udc00x", "n": -0.5e+3}'
    final = json.loads(text)
    for split in range(len(text) + 1):
        parser = PartialJSONParser()
        parser.feed(text[:split])
        parser.feed(text[split:])
        assert parser.finish() == final, split


def test_the_partial_value_is_the_live_tree() -> None:
    parser = PartialJSONParser()
    root = parser.feed('{"items": [')
    items = root["items"]
    for i in range(5):
        assert parser.feed(f'{", " if i else ""}{{"n": {i}}}') is root
    assert [x["n"] for x in items] == [0, 1, 2, 3, 4]
    assert not parser.is_open(items[0]) and parser.is_open(items) and not parser.done
    parser.feed("]}")
    assert parser.done and not parser.is_open(root)


def test_prose_before_and_a_fence_after_are_skipped_when_asked() -> None:
    parser = PartialJSONParser(skip_prose=True)
    parser.feed("Here you go:\n```json\n")
    assert parser.current() is None
    parser.feed('{"a": [1, 2]}\n```')
    assert parser.finish() == {"a": [1, 2]}


def test_a_bare_number_ends_with_the_document() -> None:
    parser = PartialJSONParser()
    assert parser.feed("42") is None
    assert parser.finish() == 42


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"a" 1}', r"offset 5: unexpected '1'"),
        ('{"a": 1,}', r"offset 8: unexpected '}'"),
        ("[1 2]", "offset 3"),
        ('{"a": nul1}', "offset 6"),
        ('{"a": 01}', "'01' is not a number"),
        ('{"a": "\\x"}', "offset 8"),
        ('{"a": "\\u12g4"}', "offset 9"),
        ("]", "offset 0"),
    ],
)
def test_malformed_json_names_the_offset(text: str, match: str) -> None:
    parser = PartialJSONParser()
    with pytest.raises(ParseError, match=match):
        for ch in text:  # the offset is counted across chunks
            parser.feed(ch)


def test_finish_on_a_cut_document_says_it_ends_early() -> None:
    parser = PartialJSONParser()
    parser.feed('{"a": [1, "x')
    with pytest.raises(ParseError, match=r"ends early at offset 12: inside a string"):
        parser.finish()
    with pytest.raises(ParseError, match="no JSON value started"):
        PartialJSONParser().finish()


def _number_prefix(text: str) -> bool:
    """Whether some completion makes ``text`` a JSON number (the oracle: "" or "0" suffices)."""
    for tail in ("", "0"):
        try:
            value = json.loads(text + tail)
        except ValueError:
            continue
        if type(value) in (int, float):
            return True
    return False


@pytest.mark.parametrize(
    "number", ["01", "-01", "1.e5", "1.]", "1e5.", "1e+-2", "-.5", "1ee", "1-"]
)
def test_a_trailing_number_that_can_never_be_valid_raises(number: str) -> None:
    for prefix in ('{"a": ', "[", ""):
        with pytest.raises(ParseError, match=r"is not a number|unexpected"):
            partial_json(prefix + number)


@pytest.mark.parametrize("number", ["-", "0", "-0", "1.", "1.5e", "1.5E+", "12e-3", "0.0"])
def test_a_trailing_number_prefix_is_absent_until_it_ends(number: str) -> None:
    assert partial_json('{"a": ' + number) == {}
    assert partial_json("[" + number) == []


@settings(max_examples=300, deadline=None)
@given(st.text("-+.eE0123456789", min_size=1, max_size=8), st.sampled_from(['{"a": ', "[", ""]))
def test_no_prefix_of_an_invalid_number_is_accepted(number: str, prefix: str) -> None:
    whole = PartialJSONParser()
    chars = PartialJSONParser()
    if _number_prefix(number):
        whole.feed(prefix + number)
        for ch in prefix + number:
            chars.feed(ch)
    else:
        with pytest.raises(ParseError):
            whole.feed(prefix + number)
        with pytest.raises(ParseError):
            for ch in prefix + number:
                chars.feed(ch)


@settings(max_examples=40, deadline=None)
@given(json_values, styles)
def test_every_prefix_of_a_valid_document_parses(value: Any, style: Any) -> None:
    text = json.dumps(value, **style)
    parser = PartialJSONParser()
    for cut in range(len(text) + 1):
        partial_json(text[:cut])  # never raises
    for ch in text:
        parser.feed(ch)
    assert parser.finish() == value
