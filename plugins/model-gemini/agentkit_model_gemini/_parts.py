"""Typed content parts (``agentkit_core.content``) as Gemini ``parts``.

Gemini takes every kind: bytes as ``inline_data``, a URL as ``file_data`` with its media type.
"""

from __future__ import annotations

from typing import Any

from agentkit_core.content import Part
from agentkit_core.content import TextPart
from agentkit_core.content import b64


def part_to_gemini(part: Part) -> dict[str, Any]:
    """One typed part as a Gemini part."""
    if isinstance(part, TextPart):
        return {"text": part.text}
    if part.data is not None:
        return {"inline_data": {"mime_type": part.media_type, "data": b64(part.data)}}
    file: dict[str, Any] = {"file_uri": part.url}
    if part.media_type:
        file["mime_type"] = part.media_type
    return {"file_data": file}
