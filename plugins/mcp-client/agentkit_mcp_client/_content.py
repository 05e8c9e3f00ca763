"""MCP content blocks as agentkit content: a tool call's result, a prompt's messages."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ToolResult

if TYPE_CHECKING:
    import mcp.types as mcp_types


def to_tool_result(result: mcp_types.CallToolResult) -> ToolResult:
    """Text stays text; images and audio become OpenAI-style content parts."""
    parts = [content_part(block) for block in result.content]
    content: str | tuple[dict[str, Any], ...]
    if all(p["type"] == "text" for p in parts):
        content = "\n".join(p["text"] for p in parts)
    else:
        content = tuple(parts)
    return ToolResult(content, is_error=bool(result.is_error), structured=result.structured_content)


def content_part(block: Any) -> dict[str, Any]:
    """One MCP content block as an agentkit content part (text, image or audio)."""
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind in ("image", "audio"):
        return media_part(kind, block.data, block.mime_type)
    if kind == "resource":
        res = block.resource
        text = getattr(res, "text", None)
        if text is not None:
            return {"type": "text", "text": text}
        return {
            "type": "text",
            "text": f"[binary resource {res.uri} ({res.mime_type or 'unknown type'})]",
        }
    if kind == "resource_link":
        return {"type": "text", "text": f"[resource {block.uri}: {block.name}]"}
    return {"type": "text", "text": str(block)}


def media_part(kind: str, data: str, mime_type: str) -> dict[str, Any]:
    """An MCP image or audio block as a content part, or a text part saying why it is left out.

    Only what a model reads is passed on: base64 data, of an image or audio media type
    agentkit sends (``image/png``, ``audio/wav``...), within the size a part may hold.
    Anything else went to the provider as it was, which refused the request and every later
    one, since the transcript kept it.
    """
    import binascii

    from agentkit_core.content import AudioPart
    from agentkit_core.content import ContentError
    from agentkit_core.content import ImagePart
    from agentkit_core.content import b64
    from agentkit_core.content import data_url

    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return {"type": "text", "text": f"[{kind} left out: its data is not base64]"}
    try:
        if kind == "image":
            image = ImagePart(data=raw, media_type=mime_type)
            return {"type": "image_url", "image_url": {"url": data_url(image)}}
        audio = AudioPart(data=raw, media_type=mime_type)
    except ContentError as exc:
        why = str(exc).split(";")[0]  # what is wrong; the rest is a fix for code
        return {"type": "text", "text": f"[{kind} left out: {why}]"}
    fmt = audio.media_type.rpartition("/")[2]
    return {"type": "input_audio", "input_audio": {"data": b64(audio.data), "format": fmt}}
