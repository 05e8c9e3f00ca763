"""The one estimator weighs every character that is not ASCII as a whole token.

Tokenizers are trained mostly on English: a CJK character, an emoji or a combining mark costs a
token or more in every provider's, so the estimate must not count four of them as one, or a
budget or ``max-input`` limit lets such text through several times over.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core.plugin import estimate_message
from agentkit_core.plugin import estimate_tokens

OVERHEAD = estimate_message(Message.user(""))


def weight(text: str) -> int:
    return estimate_message(Message.user(text)) - OVERHEAD


def test_ascii_text_is_four_characters_a_token() -> None:
    assert weight("word" * 100) == 100
    assert weight("abcde") == 2


def test_cjk_emoji_and_marks_weigh_a_token_each() -> None:
    assert weight("漢" * 400) == 400  # was 100: a quarter of what any tokenizer counts
    assert weight("👍" * 10) == 10
    assert weight("e" + "\u0301" * 40) == 41  # a stack of marks, past a limit as one letter
    assert weight("\ud800") == 1  # a lone surrogate is not ASCII either


def test_tool_call_arguments_are_weighed_the_same_way() -> None:
    call = ToolCall(id="c1", name="search", arguments='{"q": "' + "東京" * 50 + '"}')
    plain = ToolCall(id="c1", name="search", arguments='{"q": "' + "xx" * 50 + '"}')
    with_cjk = estimate_message(Message.assistant("", tool_calls=[call]))
    with_ascii = estimate_message(Message.assistant("", tool_calls=[plain]))
    assert with_cjk - with_ascii == 100 - 25


@given(st.text(max_size=300))
def test_every_character_that_is_not_ascii_is_at_least_a_token(text: str) -> None:
    others = sum(1 for c in text if not c.isascii())
    ascii_chars = len(text) - others
    assert weight(text) == -(-(ascii_chars + 4 * others) // 4)  # four ASCII or one other
    assert estimate_tokens([Message.user(text)]) == OVERHEAD + weight(text)


@given(st.text(max_size=100), st.text(max_size=100))
def test_the_estimate_of_joined_text_is_never_more_than_the_parts(a: str, b: str) -> None:
    assert weight(a + b) <= weight(a) + weight(b) <= weight(a + b) + 1
