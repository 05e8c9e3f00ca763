"""Typed content parts (``agentkit_core.content``) in the two OpenAI APIs' shapes.

Chat Completions takes images (URL or bytes), PDFs as bytes (``file_data``; it has no file URL)
and WAV or MP3 audio (``input_audio``). The Responses API takes images and PDFs, by URL or
bytes, and no audio input. Anything else is refused with the kind and the API named.
"""

from __future__ import annotations

from typing import Any

from agentkit_core.content import AudioPart
from agentkit_core.content import DocumentPart
from agentkit_core.content import ImagePart
from agentkit_core.content import Part
from agentkit_core.content import TextPart
from agentkit_core.content import UnsupportedPartError
from agentkit_core.content import b64
from agentkit_core.content import data_url

CHAT = "openai"
RESPONSES = "openai (Responses API)"
_CHAT_TAKES = ("text", "image", "PDF document bytes", "WAV or MP3 audio")
_RESPONSES_TAKES = ("text", "image", "PDF document")
_CHAT_AUDIO = {"audio/wav": "wav", "audio/mpeg": "mp3"}
#: The file name a PDF given without one is sent under (both APIs want one with bytes).
_PDF_NAME = "document.pdf"


def part_to_chat(part: Any) -> Any:
    """A typed part as a Chat Completions content part; a dict part (the wire's own) as it is."""
    if isinstance(part, dict):
        return part
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "image_url", "image_url": {"url": data_url(part)}}
    if isinstance(part, DocumentPart):
        if part.data is None:
            raise UnsupportedPartError(CHAT, "document-by-URL", _CHAT_TAKES)
        file = {"filename": part.name or _PDF_NAME, "file_data": data_url(part)}
        return {"type": "file", "file": file}
    if isinstance(part, AudioPart) and part.media_type in _CHAT_AUDIO:
        audio = {"data": b64(part.data), "format": _CHAT_AUDIO[part.media_type]}
        return {"type": "input_audio", "input_audio": audio}
    raise UnsupportedPartError(CHAT, _kind(part), _CHAT_TAKES)


def part_to_responses(part: Part, detail: str) -> dict[str, Any]:
    """A typed part as a Responses API input part."""
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "input_image", "image_url": data_url(part), "detail": detail}
    if isinstance(part, DocumentPart):
        if part.data is None:
            return {"type": "input_file", "file_url": part.url}
        return {
            "type": "input_file",
            "filename": part.name or _PDF_NAME,
            "file_data": data_url(part),
        }
    raise UnsupportedPartError(RESPONSES, _kind(part), _RESPONSES_TAKES)


def _kind(part: Any) -> str:
    if isinstance(part, AudioPart):
        return f"{part.media_type} audio"
    return str(getattr(part, "kind", type(part).__name__))
