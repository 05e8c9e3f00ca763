"""``OpenAIOptions`` and ``ResponsesOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from typing import TypedDict


class OpenAIOptions(TypedDict, total=False):
    """What a ``[models.openai]`` table may set (``OpenAIModel``'s keywords a file can hold)."""

    base_url: str
    timeout: float
    structured_output: bool
    headers: dict[str, str]
    max_tokens_field: str


class ResponsesOptions(TypedDict, total=False):
    """What a ``[models.openai-responses]`` table may set (``OpenAIResponsesModel``'s)."""

    base_url: str
    timeout: float
    structured_output: bool
    reasoning_summary: str
    headers: dict[str, str]
