"""Core's detectors of personal data and secrets, shared by every layer that redacts."""

from __future__ import annotations

import string
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from agentkit_core.plugin import PII_DETECTORS
from agentkit_core.plugin import iban_valid
from agentkit_core.plugin import luhn_valid
from agentkit_core.plugin import redact_pii

CARD = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"


def test_each_kind_is_replaced_by_its_placeholder_and_counted() -> None:
    text = (
        f"card {CARD}, iban {IBAN}, mail jane@example.org, call +44 20 7946 0958, "
        "key sk-proj-abcdefghijklmnopqrstuvwx and AKIAABCDEFGHIJKLMNOP"
    )
    out = redact_pii(text)
    assert out.text == (
        "card [redacted card], iban [redacted iban], mail [redacted email], call "
        "[redacted phone], key [redacted api key] and [redacted api key]"
    )
    assert dict(out.counts) == {"api key": 2, "card": 1, "iban": 1, "email": 1, "phone": 1}
    assert out.summary() == "2 api key, 1 card, 1 iban, 1 email, 1 phone"


def test_checksums_keep_lookalikes() -> None:
    lookalikes = "order 4111 1111 1111 1112, ref GB00 WEST 1234 5698 7654 32, id 1234567890123"
    assert redact_pii(lookalikes).text == lookalikes
    assert not redact_pii(lookalikes).changed


def test_ids_prices_dates_and_hashes_stay() -> None:
    text = "Invoice 20240115-0042 for $1,299.99 on 2024-01-15 (sha 9f86d081884c7d65) at 17:30"
    assert redact_pii(text).text == text


def _luhn_complete(body: str) -> str:
    for check in string.digits:
        if luhn_valid(body + check):
            return body + check
    raise AssertionError(body)


cards = st.text(string.digits, min_size=15, max_size=15).map(lambda b: _luhn_complete("4" + b))


def _iban(country: str, bban: str) -> str:
    for check in range(2, 99):
        candidate = f"{country}{check:02d}{bban}"
        if iban_valid(candidate):
            return candidate
    raise AssertionError(bban)


ibans = st.builds(
    _iban,
    st.sampled_from(["DE", "FR", "GB", "NL"]),
    st.text(string.digits, min_size=18, max_size=18),
)
emails = st.builds(
    "{}@{}.{}".format,
    st.text(string.ascii_lowercase, min_size=1, max_size=8),
    st.text(string.ascii_lowercase, min_size=1, max_size=8),
    st.sampled_from(["com", "org", "io"]),
)
words = st.text(string.ascii_letters + " ,.", max_size=20)


@given(st.lists(st.tuples(words, st.one_of(cards, ibans, emails)), max_size=5), words)
def test_no_inserted_value_survives_and_a_second_pass_finds_nothing(
    pieces: list[tuple[str, str]], end: str
) -> None:
    text = "".join(f"{w} {value} " for w, value in pieces) + end
    out = redact_pii(text)
    for _, value in pieces:
        assert value not in out.text
    for detector in PII_DETECTORS.values():
        assert detector.find(out.text) == []
    assert redact_pii(out.text).text == out.text  # idempotent


@given(st.text(string.ascii_letters + string.punctuation.replace("@", "") + " \n"))
def test_text_without_pii_comes_back_unchanged(text: str) -> None:
    out = redact_pii(text)
    assert out.text == text
    assert len(out.text) <= len(text)


pieces = st.one_of(
    words,
    cards,
    ibans,
    emails,
    st.sampled_from(["+44 20 7946 0958", "(555) 123-4567", "030 12345678", "sk-" + "a" * 30]),
    st.text("0123456789 -.()+@AZ", max_size=12),
)


@given(st.lists(pieces, max_size=12).map(" ".join))
def test_the_anchored_search_finds_what_a_whole_search_finds(text: str) -> None:
    for detector in PII_DETECTORS.values():
        whole = replace(detector, anchor=None)
        assert [m.span() for m in detector.matches(text)] == [
            m.span() for m in whole.matches(text)
        ], detector.kind


def test_a_match_longer_than_its_window_is_taken_whole() -> None:
    token = "eyJ" + "a" * 5000 + ".eyJ" + "b" * 10 + ".sig_value_1"
    out = redact_pii(f"auth {token} end")
    assert out.text == "auth [redacted api key] end"
