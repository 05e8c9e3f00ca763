"""Typed content parts (``agentkit_core.content``) as Anthropic Messages API blocks.

Images and PDFs go by URL or as base64 bytes; the API takes no audio, which is refused.
"""

from __future__ import annotations

from typing import Any

from agentkit_core.content import DocumentPart
from agentkit_core.content import ImagePart
from agentkit_core.content import Part
from agentkit_core.content import TextPart
from agentkit_core.content import UnsupportedPartError
from agentkit_core.content import b64


def part_to_block(part: Part) -> dict[str, Any]:
    """One typed part as an Anthropic content block."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, (ImagePart, DocumentPart)):
        if part.data is None:
            source: dict[str, Any] = {"type": "url", "url": part.url}
        else:
            source = {"type": "base64", "media_type": part.media_type, "data": b64(part.data)}
        if isinstance(part, ImagePart):
            return {"type": "image", "source": source}
        block = {"type": "document", "source": source}
        if part.name:
            block["title"] = part.name
        return block
    raise UnsupportedPartError("anthropic", part.kind, ("text", "image", "PDF document"))
