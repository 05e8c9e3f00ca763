"""Typed content parts: checked when made, carried by messages, encoded, counted."""

from __future__ import annotations

import base64
import hashlib

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core._content import IMAGE_TYPES
from agentkit_core.content import MAX_PART_BYTES
from agentkit_core.content import AudioPart
from agentkit_core.content import ContentError
from agentkit_core.content import DocumentPart
from agentkit_core.content import ImagePart
from agentkit_core.content import TextPart
from agentkit_core.content import data_url
from agentkit_core.plugin import decode_state
from agentkit_core.plugin import encode_state
from agentkit_core.plugin import estimate_message

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))


def test_parts_normalise_media_types_and_render_data_urls() -> None:
    image = ImagePart(data=PNG, media_type="IMAGE/JPG")
    assert image.media_type == "image/jpeg"
    assert data_url(image).startswith("data:image/jpeg;base64,iVBORw0KGgo")
    assert AudioPart(b"RIFF", "audio/x-wav").media_type == "audio/wav"
    assert data_url(ImagePart(url="https://example.com/a.png")) == "https://example.com/a.png"
    assert DocumentPart(data=b"%PDF-1.7").media_type == "application/pdf"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: ImagePart(data=PNG, media_type="image/tiff"), "'image/tiff' is not one"),
        (lambda: ImagePart(data=PNG), "media type None"),
        (lambda: ImagePart(url="https://x/a.png", data=PNG, media_type="image/png"), "both"),
        (lambda: ImagePart(), "neither"),
        (lambda: ImagePart(url="file:///etc/passwd"), "not an http(s) URL"),
        (lambda: DocumentPart(data=b"x", media_type="text/html"), "application/pdf"),
        (lambda: AudioPart("text", "audio/wav"), "must be bytes"),  # type: ignore[arg-type]
        (lambda: AudioPart(b"\0" * (MAX_PART_BYTES + 1), "audio/wav"), "over the limit"),
        (lambda: TextPart(3), "must be a str"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_part_is_refused_naming_the_value_and_the_fix(make, says) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ContentError, match=r"pass|send|read|must") as caught:
        make()
    assert says in str(caught.value)
    assert isinstance(caught.value, ConfigError)


def test_a_message_of_parts_keeps_its_text_and_round_trips_through_the_encoder() -> None:
    message = Message.user(
        (
            TextPart("look: "),
            ImagePart(data=PNG, media_type="image/png"),
            {"type": "text", "text": "and this"},
            {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}},
            DocumentPart(url="https://example.com/a.pdf", name="a.pdf"),
            AudioPart(b"ID3", "audio/mpeg"),
        )
    )
    assert message.text == "look: and this"
    back = decode_state(encode_state({"m": message}))["m"]
    assert back == message
    assert type(back.content[1]) is ImagePart and back.content[1].data == PNG


def test_the_estimator_counts_each_kind_by_its_documented_figure() -> None:
    from agentkit_core._tokens import AUDIO_KIB_TOKENS
    from agentkit_core._tokens import DOCUMENT_PAGE_TOKENS
    from agentkit_core._tokens import IMAGE_TOKENS
    from agentkit_core._tokens import MESSAGE_OVERHEAD

    def tokens(*parts: object) -> int:
        return estimate_message(Message.user(tuple(parts))) - MESSAGE_OVERHEAD  # type: ignore[arg-type]

    assert tokens(TextPart("abcdefgh")) == 2
    assert tokens(ImagePart(url="https://example.com/a.png")) == IMAGE_TOKENS
    pdf = b"%PDF-1.7 << /Type /Pages /Kids [3 0 R 4 0 R] >> << /Type /Page >> << /Type/Page >>"
    assert tokens(DocumentPart(data=pdf)) == 2 * DOCUMENT_PAGE_TOKENS
    assert tokens(DocumentPart(url="https://example.com/a.pdf")) == DOCUMENT_PAGE_TOKENS
    assert tokens(AudioPart(b"\0" * 10 * 1024, "audio/wav")) == 10 * AUDIO_KIB_TOKENS
    # an OpenAI-style dict part counts as before
    assert tokens({"type": "image_url", "image_url": {"url": "x"}}) == 64


def test_a_run_takes_text_and_parts_as_its_task() -> None:
    from agentkit_core import Agent

    image = ImagePart(data=PNG, media_type="image/png")
    result = Agent(model="test").run_sync(["what is this?", image])
    task = next(m for m in result.transcript if m.role == "user")
    assert task.content == (TextPart("what is this?"), image)
    assert task.text == "what is this?"


def _stored(parts: tuple[object, ...]) -> tuple[Message, Message, str]:
    """A message of ``parts`` appended to a memory:// session twice, read back; the raw body."""
    import asyncio

    from agentkit_core import open_sessions
    from agentkit_core.plugin import NewItem

    async def go() -> tuple[Message, Message, str]:
        async with await open_sessions("memory://", manager=PM) as sessions:
            head = await sessions.create()
            message = Message.user(parts)  # type: ignore[arg-type]
            new = [NewItem("user", {"message": message})] * 2
            await sessions.append(head.session_id, head.id, new)
            path = await sessions.path(head.session_id)
            raw = await sessions.store.path(path[-1].id)
            return path[1].body["message"], path[2].body["message"], raw[-1].body_json

    return asyncio.run(go())


@settings(max_examples=40, deadline=None)
@given(
    st.binary(max_size=2048),
    st.sampled_from(sorted(IMAGE_TYPES)),
    st.binary(max_size=512),
)
def test_parts_round_trip_through_a_session_by_a_stable_hash(
    image: bytes, media: str, audio: bytes
) -> None:
    parts = (TextPart("x"), ImagePart(data=image, media_type=media), AudioPart(audio, "audio/ogg"))
    first, second, raw = _stored(parts)
    assert first.content == second.content == parts
    assert hashlib.sha256(image).hexdigest() in raw  # the record names the bytes by their hash
    back, again, state = _checkpointed(parts)
    assert back.content == again.content == parts
    assert hashlib.sha256(image).hexdigest() in state


def _checkpointed(parts: tuple[object, ...]) -> tuple[Message, Message, str]:
    """A message of ``parts`` checkpointed in two versions of a memory:// run, read back."""
    import asyncio

    from agentkit_core import open_checkpointer

    async def go() -> tuple[Message, Message, str]:
        async with await open_checkpointer("memory://", manager=PM) as cp:
            message = Message.user(parts)  # type: ignore[arg-type]
            await cp.snapshot("r", {"transcript": [message]})
            await cp.snapshot("r", {"transcript": [message, message]})
            first, latest = await cp.at_version("r", 1), await cp.resume("r")
            raw = await cp.port.latest("r", "agent")
            assert first is not None and latest is not None and raw is not None
            return first.state["transcript"][0], latest.state["transcript"][1], raw.state

    return asyncio.run(go())


async def test_a_missing_blob_is_a_clear_error(pm) -> None:
    from agentkit_core import StorageError
    from agentkit_core import open_sessions
    from agentkit_core.plugin import NewItem

    async with await open_sessions("memory://", manager=pm) as sessions:
        head = await sessions.create()
        message = Message.user((ImagePart(data=PNG, media_type="image/png"),))
        await sessions.append(head.session_id, head.id, NewItem("user", {"message": message}))
        sessions.store._blobs.clear()  # type: ignore[attr-defined]
        with pytest.raises(StorageError, match=r"names blob sha256 [0-9a-f]{64} that memory://"):
            await sessions.path(head.session_id)


def test_a_trace_or_event_payload_holds_a_part_as_json() -> None:
    from agentkit_core.plugin import jsonable

    message = Message.user((TextPart("x"), ImagePart(data=PNG, media_type="image/png")))
    data = jsonable(message)
    assert data["content"][1] == {  # type: ignore[index,call-overload]
        "url": None,
        "data": base64.b64encode(PNG).decode(),
        "media_type": "image/png",
    }
    assert jsonable({"b": b"plain"}) == {"b": "plain"}  # UTF-8 bytes stay text, as before
