"""per_arguments: what is read from a callable is remembered for hashable arguments only."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core._once import per_arguments


def counted() -> tuple[list[Any], Any]:
    calls: list[Any] = []

    @per_arguments
    def read(value: Any) -> str:
        calls.append(value)
        if value == "bad":
            raise TypeError("not readable")
        return repr(value)

    return calls, read


@given(st.lists(st.one_of(st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2))))
def test_hashable_arguments_are_read_once_and_unhashable_ones_every_time(values: list[Any]) -> None:
    calls, read = counted()
    for value in values:
        assert read(value) == repr(value)
    hashable = [v for v in values if not isinstance(v, list)]
    unhashable = [v for v in values if isinstance(v, list)]
    assert len(calls) == len(set(hashable)) + len(unhashable)


def test_an_error_is_raised_every_time_and_never_remembered() -> None:
    calls, read = counted()
    for _ in range(2):
        with pytest.raises(TypeError, match="not readable"):
            read("bad")
    assert calls == ["bad", "bad"]
