"""Plugin options checked against what the plugin's factory takes (``check_options``)."""

from __future__ import annotations

import keyword
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core._tables import check_options
from agentkit_core._tables import table_where


class Window:
    def __init__(self, keep_recent: int = 10, *, label: str = "", manager: Any = None) -> None:
        self.keep_recent, self.label = keep_recent, label


def wrapper(**options: Any) -> Window:
    """A lazy factory as the guard plugins write them: the class it returns takes the options."""
    return Window(**options)


TAKEN = ("keep_recent", "label")
names = st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n)
)


@settings(max_examples=60, deadline=None)
@given(options=st.dictionaries(names, st.integers(), max_size=4))
def test_a_key_is_refused_exactly_when_the_factory_does_not_take_it(
    options: dict[str, int],
) -> None:
    unknown = [key for key in options if key not in TAKEN]
    for factory, returned in ((Window, False), (wrapper, True)):
        if not unknown:
            check_options(factory, options, "[kit.x] in f.toml", returned=returned)
            continue
        with pytest.raises(ConfigError) as raised:
            check_options(factory, options, "[kit.x] in f.toml", returned=returned)
        message = str(raised.value)
        assert message.startswith(f"unknown key {unknown[0]!r} in [kit.x] in f.toml")
        assert message.endswith("the keys there are keep_recent, label")  # never 'manager'


def test_the_nearest_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"did you mean 'keep_recent'\?"):
        check_options(Window, {"keep_recnt": 3}, "here")


def test_a_factory_taking_any_options_is_left_to_check_them_before_it_fails() -> None:
    check_options(wrapper, {"anything": 1}, "here")  # the factory's own business
    with pytest.raises(ConfigError, match="unknown key 'anything' in here"):
        check_options(wrapper, {"anything": 1}, "here", returned=True)
    check_options(dict, {"anything": 1}, "here", returned=True)  # returns no class: unknown


@pytest.mark.parametrize(
    ("where", "key", "expected"),
    [
        (
            "[kit] in /p/agentkit.toml",
            "compactor_options",
            "[kit.compactor_options] in /p/agentkit.toml",
        ),
        (
            "[tool.agentkit.kit] in /p/pyproject.toml",
            "max-input",
            "[tool.agentkit.kit.max-input] in /p/pyproject.toml",
        ),
        ("[kit] in /p/a.toml", "a.b", '[kit."a.b"] in /p/a.toml'),
    ],
)
def test_table_where_names_the_table_as_the_file_writes_it(
    where: str, key: str, expected: str
) -> None:
    assert table_where(where, key) == expected
