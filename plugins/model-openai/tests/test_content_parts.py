"""Typed content parts through both OpenAI converters to a real local server (the bodies it
received), and refused, before anything is sent, where an API does not take them."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from agentkit_model_openai import OpenAIModel
from agentkit_model_openai import OpenAIResponsesModel
from agentkit_model_openai._parts import part_to_chat
from agentkit_model_openai._parts import part_to_responses
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
WAV = b"RIFF\x24\x00\x00\x00WAVE"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def ask(*parts: Any) -> ModelRequest:
    return ModelRequest((Message.user(parts),))


async def test_chat_sends_images_pdfs_and_audio_in_its_shapes(server: Any) -> None:
    server.json("plain.json")
    model = OpenAIModel("gpt-4o-mini", base_url=server.url, api_key="sk-test")
    await model.request(
        ask(
            TextPart("What are these?"),
            ImagePart(data=PNG, media_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg"),
            DocumentPart(data=PDF, name="report.pdf"),
            AudioPart(WAV, "audio/wav"),
            {"type": "image_url", "image_url": {"url": "https://example.com/dog.png"}},
        )
    )
    [received] = server.received
    assert received.json()["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What are these?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(PNG)}"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
                {
                    "type": "file",
                    "file": {
                        "filename": "report.pdf",
                        "file_data": f"data:application/pdf;base64,{b64(PDF)}",
                    },
                },
                {"type": "input_audio", "input_audio": {"data": b64(WAV), "format": "wav"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/dog.png"}},
            ],
        }
    ]


async def test_responses_sends_images_and_pdfs_by_url_or_bytes(server: Any) -> None:
    server.json("responses_plain.json")
    model = OpenAIResponsesModel("gpt-4.1-mini", base_url=server.url, api_key="sk-test")
    await model.request(
        ask(
            TextPart("Summarise"),
            ImagePart(data=PNG, media_type="image/png"),
            DocumentPart(url="https://example.com/a.pdf"),
            DocumentPart(data=PDF),
        )
    )
    [received] = server.received
    assert received.json()["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Summarise"},
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{b64(PNG)}",
                    "detail": "auto",
                },
                {"type": "input_file", "file_url": "https://example.com/a.pdf"},
                {
                    "type": "input_file",
                    "filename": "document.pdf",
                    "file_data": f"data:application/pdf;base64,{b64(PDF)}",
                },
            ],
        }
    ]


@pytest.mark.parametrize(
    ("responses", "part", "says"),
    [
        (False, DocumentPart(url="https://example.com/a.pdf"), "document-by-URL"),
        (False, AudioPart(b"OggS", "audio/ogg"), "audio/ogg audio"),
        (True, AudioPart(WAV, "audio/wav"), "audio/wav audio"),
    ],
)
async def test_what_an_api_does_not_take_is_refused_before_sending(
    server: Any, responses: bool, part: Any, says: str
) -> None:
    model: Any = (
        OpenAIResponsesModel("gpt-4.1-mini", base_url=server.url, api_key="k")
        if responses
        else OpenAIModel("gpt-4o-mini", base_url=server.url, api_key="k")
    )
    with pytest.raises(UnsupportedPartError) as refused:
        await model.request(ask(TextPart("hi"), part))
    provider = "openai (Responses API)" if responses else "openai"
    assert f"provider {provider!r} does not take {says} parts" in str(refused.value)
    assert server.received == []


@st.composite
def parts(draw: st.DrawFn) -> Any:
    """Parts of every kind with arbitrary bytes and media types (those made at all)."""
    kind = draw(st.sampled_from([ImagePart, DocumentPart, AudioPart]))
    media = draw(st.one_of(st.text(max_size=20), st.sampled_from(["image/png", "audio/mpeg"])))
    data = draw(st.binary(max_size=64))
    try:
        if kind is AudioPart:
            return AudioPart(data, media)
        return kind(data=data, media_type=media)
    except ContentError:
        return TextPart(media)


@given(parts())
def test_arbitrary_parts_convert_or_are_refused_clearly(part: Any) -> None:
    for convert in (part_to_chat, lambda p: part_to_responses(p, "auto")):
        try:
            converted = convert(part)
        except UnsupportedPartError as refused:
            assert refused.kind in str(refused)
        else:
            assert isinstance(converted, dict) and converted["type"]
