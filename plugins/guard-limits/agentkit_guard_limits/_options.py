"""``MaxInputOptions``, ``MaxOutputOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from typing import TypedDict


class MaxInputOptions(TypedDict, total=False):
    """The options of ``max-input`` (``guard_options={"max-input": {...}}``), checked."""

    #: The most tokens a request may have, by agentkit's estimate (at least 1; default 100000).
    max_tokens: int


class MaxOutputOptions(TypedDict, total=False):
    """The options of ``max-output`` (``guard_options={"max-output": {...}}``), checked."""

    #: The most characters an answer may have (at least 1; default 20000).
    max_chars: int
