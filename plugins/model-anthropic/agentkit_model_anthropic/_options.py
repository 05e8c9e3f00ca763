"""``AnthropicOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from typing import TypedDict


class AnthropicOptions(TypedDict, total=False):
    """What a ``[models.anthropic]`` table may set: ``AnthropicModel``'s keywords a file can hold.

    ``thinking`` is a token budget there; ``thinking="adaptive"`` is given in code.
    """

    base_url: str
    max_tokens: int
    thinking: int
    cache: bool
    cache_ttl: str
    structured_output: str
    timeout: float
    headers: dict[str, str]
