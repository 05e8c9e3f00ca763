"""A Windows drive path given where a store URL goes has no scheme: one letter is a drive."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core._urls import url_scheme
from agentkit_core.plugin import mask_url
from agentkit_core.plugin import open_checkpoint_store


@pytest.mark.parametrize(
    "path", ["C:\\data\\runs.db", "D:/data/runs.db", "c:runs.db", "Z:", "e:\\a b\\c.db"]
)
def test_a_drive_path_has_no_scheme(path: str) -> None:
    assert url_scheme(path) == ""


@pytest.mark.parametrize(
    ("url", "scheme"),
    [("sqlite:///C:/data/runs.db", "sqlite"), ("ab://x", "ab"), ("Memory://", "memory")],
)
def test_a_scheme_has_two_characters_at_least(url: str, scheme: str) -> None:
    assert url_scheme(url) == scheme


async def test_a_drive_path_as_a_store_url_says_it_has_no_scheme(pm) -> None:
    # It used to be "no checkpoint store handles the scheme 'c'".
    with pytest.raises(ConfigError, match=r"'C:\\\\data\\\\runs.db' has no scheme; write it like"):
        await open_checkpoint_store("C:\\data\\runs.db", manager=pm)


@given(
    letter=st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    rest=st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
)
@settings(max_examples=200, deadline=None)
def test_one_letter_before_a_colon_is_never_a_scheme_and_a_password_never_shows(
    letter: str, rest: str
) -> None:
    assert url_scheme(f"{letter}:{rest}") == ""
    masked = mask_url(f"{letter}://app:S3CR3T@db{rest}")
    assert "S3CR3T" not in masked.replace(rest, "")
