"""``GeminiOptions``: the options this plugin declares (``settings=``).

Made when the options are first read, not when the plugin loads: a first run loads every
installed plugin, and making a ``TypedDict`` costs ~0.8 M instructions (its string hints
compiled one by one), more than loading a light entry module.
"""

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
