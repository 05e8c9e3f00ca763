"""Typed content parts: text, images, PDF documents and audio in a message (docs/content.md).

A part is frozen and checked when it is made, so a bad media type, or both or neither of ``url``
and ``data``, fails where it is written rather than at a provider. A message's content is a
string or a tuple of parts; OpenAI-style dicts (``{"type": "image_url", ...}``) stay accepted
beside the typed parts, so every shape that worked before still does.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import ClassVar
from typing import TypeAlias

from ._errors import ConfigError
from ._records import record

#: The largest ``data`` a part may hold: bigger bytes are refused when the part is made, so no
#: store, request or checkpoint ever holds them (providers cap inline files near 20 MiB too).
MAX_PART_BYTES = 20 * 1024 * 1024

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
DOCUMENT_TYPES = frozenset({"application/pdf"})
AUDIO_TYPES = frozenset(
    {"audio/wav", "audio/mpeg", "audio/ogg", "audio/flac", "audio/aac", "audio/aiff"}
)
#: Other spellings of the same media types (``mimetypes`` gives ``audio/x-wav`` for ``.wav``).
_ALIASES = {
    "image/jpg": "image/jpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/mp3": "audio/mpeg",
    "audio/x-flac": "audio/flac",
    "audio/x-aiff": "audio/aiff",
}


class ContentError(ConfigError):
    """A content part that cannot be made as given: its message names the value and the fix."""


class UnsupportedPartError(ContentError):
    """A provider that does not take a kind of part (``.provider``, ``.kind`` say which)."""

    def __init__(self, provider: str, kind: str, takes: Sequence[str]) -> None:
        super().__init__(
            f"provider {provider!r} does not take {kind} parts; it takes "
            f"{', '.join(takes)} parts: leave the {kind} out, or use a provider that takes it "
            "(docs/content.md has the table)",
            value=kind,
            source=provider,
        )
        self.provider = provider
        self.kind = kind


def normal_media_type(media_type: str) -> str:
    """``media_type`` lower-cased, in agentkit's spelling (``audio/x-wav`` is ``audio/wav``)."""
    mt = media_type.strip().lower()
    return _ALIASES.get(mt, mt)


def _media(kind: str, media_type: str | None, allowed: frozenset[str]) -> str:
    mt = normal_media_type(media_type or "")
    if mt not in allowed:
        raise ContentError(
            f"{kind} part: media type {media_type!r} is not one agentkit sends; pass "
            f"media_type= one of {', '.join(sorted(allowed))}",
            value=media_type,
        )
    return mt


def _source(kind: str, url: str | None, data: bytes | None) -> None:
    """Exactly one of ``url`` and ``data``; bytes within :data:`MAX_PART_BYTES`."""
    if (url is None) == (data is None):
        which = "both" if url is not None else "neither"
        raise ContentError(
            f"{kind} part: {which} of url= and data= given; pass exactly one (a URL the "
            "provider fetches, or the bytes)",
            value=url,
        )
    if url is not None and not (isinstance(url, str) and url.startswith(("https:", "http:"))):
        raise ContentError(
            f"{kind} part: url={url!r:.80} is not an http(s) URL; pass the bytes as data=",
            value=url,
        )
    if data is not None:
        _size(kind, data)


def _size(kind: str, data: object) -> None:
    if not isinstance(data, bytes):
        raise ContentError(
            f"{kind} part: data= must be bytes, not {type(data).__name__}; read the file in "
            "binary mode ('rb')",
            value=type(data).__name__,
        )
    if len(data) > MAX_PART_BYTES:
        raise ContentError(
            f"{kind} part: {len(data)} bytes is over the limit of {MAX_PART_BYTES} bytes; "
            "send a smaller or compressed file, or a URL the provider fetches",
            value=len(data),
        )


@record(frozen=True, slots=True)
class TextPart:
    """Text, as one part of a message."""

    text: str
    kind: ClassVar[str] = "text"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ContentError(
                f"text part: text= must be a str, not {type(self.text).__name__}",
                value=self.text,
            )


@record(frozen=True, slots=True)
class ImagePart:
    """An image: ``url=`` (http(s), fetched by the provider) or ``data=`` bytes + ``media_type``."""

    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    kind: ClassVar[str] = "image"

    def __post_init__(self) -> None:
        _source("image", self.url, self.data)
        if self.data is not None or self.media_type is not None:
            media = _media("image", self.media_type, IMAGE_TYPES)
            object.__setattr__(self, "media_type", media)


@record(frozen=True, slots=True)
class DocumentPart:
    """A PDF document: ``url=`` or ``data=`` bytes; ``name`` is the file name shown to the model."""

    url: str | None = None
    data: bytes | None = None
    media_type: str = "application/pdf"
    name: str | None = None
    kind: ClassVar[str] = "document"

    def __post_init__(self) -> None:
        _source("document", self.url, self.data)
        object.__setattr__(self, "media_type", _media("document", self.media_type, DOCUMENT_TYPES))


@record(frozen=True, slots=True)
class AudioPart:
    """Audio bytes with their media type (``audio/wav``, ``audio/mpeg``, ...)."""

    data: bytes
    media_type: str
    kind: ClassVar[str] = "audio"

    def __post_init__(self) -> None:
        _size("audio", self.data)
        object.__setattr__(self, "media_type", _media("audio", self.media_type, AUDIO_TYPES))


#: A typed content part.
Part: TypeAlias = TextPart | ImagePart | DocumentPart | AudioPart
PART_TYPES = (TextPart, ImagePart, DocumentPart, AudioPart)
#: What a run takes as its task: a string, or strings and parts in order.
Task: TypeAlias = str | Sequence[str | Part]


def task_content(task: Task) -> str | tuple[Part, ...]:
    """``task`` as a user message's content; strings in a sequence become :class:`TextPart`."""
    if isinstance(task, str):
        return task
    if not isinstance(task, Sequence):
        raise ContentError(
            f"a task is a str or a sequence of str and parts, not {type(task).__name__}",
            value=task,
        )
    parts: list[Part] = []
    for item in task:
        if isinstance(item, str):
            parts.append(TextPart(item))
        elif isinstance(item, PART_TYPES):
            parts.append(item)
        else:
            raise ContentError(
                f"a task's items are str or content parts (TextPart, ImagePart, DocumentPart, "
                f"AudioPart), not {type(item).__name__}",
                value=item,
            )
    return tuple(parts)


def part_text(part: object) -> str | None:
    """The text of a text part (typed or an OpenAI-style dict); None for any other part."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, dict) and part.get("type") == "text":
        return str(part.get("text", ""))
    return None


def content_text(content: str | Sequence[object]) -> str:
    """The text of message content: the string, or its text parts joined."""
    if isinstance(content, str):
        return content
    return "".join(t for t in map(part_text, content) if t is not None)


def task_text(task: Task) -> str:
    """The text of a task (what grounding and traces see)."""
    return content_text(task_content(task))


def data_url(part: ImagePart | DocumentPart) -> str:
    """The part's URL, or its bytes as a ``data:`` URL."""
    if part.data is None:
        return str(part.url)
    return f"data:{part.media_type};base64,{b64(part.data)}"


def b64(data: bytes) -> str:
    """Bytes as base64 text, as every provider's JSON carries them."""
    return base64.b64encode(data).decode("ascii")
