"""Typed content parts through the Anthropic converter to a real local server (the body it
received); audio, which the API does not take, refused before anything is sent."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from agentkit_model_anthropic import AnthropicModel
from agentkit_model_anthropic._parts import part_to_block
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core.content import AudioPart
from agentkit_core.content import ContentError
from agentkit_core.content import DocumentPart
from agentkit_core.content import ImagePart
from agentkit_core.content import TextPart
from agentkit_core.content import UnsupportedPartError
from agentkit_core.plugin import ModelRequest

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))
PDF = b"%PDF-1.7 /Type /Page"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def model(server: Any) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key="sk-ant-test")


async def test_images_and_pdfs_go_as_blocks_by_url_or_bytes(server: Any) -> None:
    server.json("plain.json")
    message = Message.user(
        (
            TextPart("Compare"),
            ImagePart(data=PNG, media_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg"),
            DocumentPart(data=PDF, name="report.pdf"),
            DocumentPart(url="https://example.com/a.pdf"),
        )
    )
    await model(server).request(ModelRequest((message,)))
    [received] = server.received
    assert received.json()["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Compare"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)},
                },
                {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)},
                    "title": "report.pdf",
                },
                {  # the last block carries the prompt cache mark, as any last block does
                    "type": "document",
                    "source": {"type": "url", "url": "https://example.com/a.pdf"},
                    "cache_control": {"type": "ephemeral"},
                },
            ],
        }
    ]


async def test_audio_is_refused_naming_the_provider(server: Any) -> None:
    message = Message.user((TextPart("listen"), AudioPart(b"RIFF", "audio/wav")))
    with pytest.raises(UnsupportedPartError, match="provider 'anthropic' does not take audio"):
        await model(server).request(ModelRequest((message,)))
    assert server.received == []


@given(
    st.sampled_from([ImagePart, DocumentPart, AudioPart]),
    st.one_of(st.text(max_size=20), st.sampled_from(["image/gif", "application/pdf"])),
    st.binary(max_size=64),
)
def test_arbitrary_parts_convert_or_are_refused_clearly(kind: Any, media: str, data: bytes) -> None:
    try:
        part = AudioPart(data, media) if kind is AudioPart else kind(data=data, media_type=media)
    except ContentError:
        return
    try:
        block = part_to_block(part)
    except UnsupportedPartError as refused:
        assert refused.kind == "audio"
    else:
        assert block["source"]["data"] == b64(data)
