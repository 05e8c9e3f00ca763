"""Typed content parts through the Gemini converter to a real local server (the body it
received): every kind goes, bytes inline and URLs as file data."""

from __future__ import annotations

import base64
from typing import Any

from agentkit_model_gemini import GeminiModel
from agentkit_model_gemini._parts import part_to_gemini
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core.content import AudioPart
from agentkit_core.content import ContentError
from agentkit_core.content import DocumentPart
from agentkit_core.content import ImagePart
from agentkit_core.content import TextPart
from agentkit_core.plugin import ModelRequest

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))
PDF = b"%PDF-1.7 /Type /Page"
MP3 = b"ID3\x04\x00"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_every_kind_goes_inline_or_as_file_data(server: Any) -> None:
    server.json("plain.json")
    model = GeminiModel("gemini-2.5-flash", base_url=server.url, api_key="test-key")
    message = Message.user(
        (
            TextPart("Describe"),
            ImagePart(data=PNG, media_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg", media_type="image/jpeg"),
            DocumentPart(data=PDF),
            DocumentPart(url="https://example.com/a.pdf"),
            AudioPart(MP3, "audio/mp3"),
        )
    )
    await model.request(ModelRequest((message,)))
    [received] = server.received
    # the body names the part fields in camelCase, as the model sends every part
    assert received.json()["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "Describe"},
                {"inlineData": {"mime_type": "image/png", "data": b64(PNG)}},
                {
                    "fileData": {
                        "file_uri": "https://example.com/cat.jpg",
                        "mime_type": "image/jpeg",
                    }
                },
                {"inlineData": {"mime_type": "application/pdf", "data": b64(PDF)}},
                {
                    "fileData": {
                        "file_uri": "https://example.com/a.pdf",
                        "mime_type": "application/pdf",
                    }
                },
                {"inlineData": {"mime_type": "audio/mpeg", "data": b64(MP3)}},
            ],
        }
    ]


@given(
    st.sampled_from([ImagePart, DocumentPart, AudioPart]),
    st.one_of(st.text(max_size=20), st.sampled_from(["image/webp", "audio/flac"])),
    st.binary(max_size=64),
)
def test_arbitrary_parts_convert(kind: Any, media: str, data: bytes) -> None:
    try:
        part = AudioPart(data, media) if kind is AudioPart else kind(data=data, media_type=media)
    except ContentError:
        return
    assert part_to_gemini(part) == {
        "inline_data": {"mime_type": part.media_type, "data": b64(data)}
    }
