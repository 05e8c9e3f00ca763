"""``GeminiOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from typing import TypedDict


class GeminiOptions(TypedDict, total=False):
    """What a ``[models.gemini]`` table may set (``GeminiModel``'s keywords a file can hold)."""

    base_url: str
    vertexai: bool
    project: str
    location: str
    api_version: str
    timeout: float
    include_thoughts: bool
    cached_content: str
    headers: dict[str, str]
