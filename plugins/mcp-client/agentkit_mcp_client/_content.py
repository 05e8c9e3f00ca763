"""MCP content blocks as agentkit content: a tool call's result, a prompt's messages."""

from __future__ import annotations

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
    if kind == "image":
        return {
            "type": "image_url",
            "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"},
        }
    if kind == "audio":
        fmt = block.mime_type.rpartition("/")[2]
        return {"type": "input_audio", "input_audio": {"data": block.data, "format": fmt}}
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
