"""``token_count``: the one reading of a usage count from a provider's answer, for every provider.

A count is a whole number of 0 or more; absent or null is 0. Anything else from the wire is a
ProviderResponseError naming the field and the value, never a usage that lifts a token or cost
budget (a negative count) or a number the server never sent (a string, a float, true).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import token_count

#: Any value ``json.loads`` returns.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=10,
)


def test_a_count_absent_null_or_whole_is_read() -> None:
    assert token_count({"prompt_tokens": 12}, "prompt_tokens", "usage") == 12
    assert token_count({"prompt_tokens": 0}, "prompt_tokens", "usage") == 0
    assert token_count({"prompt_tokens": None}, "prompt_tokens", "usage") == 0
    assert token_count({}, "prompt_tokens", "usage") == 0
    # the details object of a count absent, null or no object: it holds none
    for details in (None, [], "x", 3):
        assert token_count(details, "cached_tokens", "usage.prompt_tokens_details") == 0


@pytest.mark.parametrize("value", [-5, 1.5, 7.0, "7", True, False, [1], {"n": 1}])
def test_anything_else_is_refused_naming_the_field_and_the_value(value: object) -> None:
    with pytest.raises(ProviderResponseError) as caught:
        token_count({"cached_tokens": value}, "cached_tokens", "usage.prompt_tokens_details")
    expected = f"usage.prompt_tokens_details.cached_tokens is not a token count: {value!r}"
    assert str(caught.value) == expected


def test_the_value_shown_is_cut_short() -> None:
    with pytest.raises(ProviderResponseError) as caught:
        token_count({"n": "9" * 10_000}, "n", "usage_metadata")
    assert str(caught.value) == "usage_metadata.n is not a token count: '" + "9" * 79


def test_a_negative_count_too_long_to_show_is_still_refused_as_one() -> None:
    # str() of an int past 4300 digits raises ValueError: the refusal must not become that
    with pytest.raises(
        ProviderResponseError, match=r"^usage\.n is not a token count: <int too large to show>$"
    ):
        token_count({"n": -(10**5000)}, "n", "usage")
    assert token_count({"n": 10**5000}, "n", "usage") == 10**5000
    deep: list[object] = []
    for _ in range(200_000):  # repr() of it overflows the stack
        deep = [deep]
    with pytest.raises(ProviderResponseError, match=r"^usage\.n is not a token count: <list too"):
        token_count({"n": deep}, "n", "usage")


@given(json_values)
def test_any_json_value_is_its_own_count_or_refused(value: object) -> None:
    data = json.loads(json.dumps({"n": value}))  # as the wire hands it over
    try:
        count = token_count(data, "n", "usage")
    except ProviderResponseError as exc:
        assert value is not None and (type(value) is not int or value < 0)
        assert str(exc).startswith("usage.n is not a token count: ")
        return
    assert type(count) is int and count >= 0
    assert count == (0 if value is None else value)


@given(json_values)
def test_data_that_is_no_object_holds_no_count(data: object) -> None:
    if not isinstance(data, dict):
        assert token_count(data, "n", "usage") == 0


@given(st.booleans())
def test_a_bool_is_never_a_count(value: bool) -> None:
    with pytest.raises(ProviderResponseError, match=r"usage\.n is not a token count: (True|False)"):
        token_count({"n": value}, "n", "usage")
