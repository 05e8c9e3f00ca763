"""What the run viewer shows of message content: its text, and its images inline.

An image given as bytes is shown as an ``<img>`` with a ``data:`` URL, which the page's
Content-Security-Policy allows (``img-src data:``) and nothing else: the page fetches nothing, so
an image given by URL, a document or audio is named in a line, not loaded.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import TypedDict

from .._content import AudioPart
from .._content import DocumentPart
from .._content import ImagePart
from .._content import data_url
from .._content import part_text
from .._messages import Message
from ._terminal import BIDI_SHOWN

#: What the page's Content-Security-Policy adds for the images: ``data:`` URLs only.
IMG_SRC = "img-src data:"


def esc(value: object) -> str:
    """``value`` as HTML text (None as nothing): markup escaped, bidirectional controls shown.

    Shown as the command line shows them on a terminal: an override in a tool's name, a call's
    arguments or a reason would show one tool's name as another's.
    """
    text = "" if value is None else str(value)
    return html.escape(text, quote=True).translate(BIDI_SHOWN)


class MediaRow(TypedDict):
    """One non-text part of the run's messages: an image to show, or a line naming the part."""

    kind: str
    media_type: str | None
    #: A ``data:`` URL the page shows as an image, or None.
    src: str | None
    label: str


def content_text(content: object) -> str:
    """The text of message content; content of no text parts as JSON (bytes as their size)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        texts = [part_text(p) for p in content]
        return "".join(t for t in texts if t is not None) or json.dumps(
            content, ensure_ascii=False, default=_label
        )
    return json.dumps(content, ensure_ascii=False, default=repr)


def json_text(value: object) -> str:
    """``value`` as indented JSON; flat, or a line saying so, when too deep to encode here.

    With the recursion limit raised (as an application may), the parser takes values nested
    deeper than the encoders can write this far down the stack.
    """
    for indent in (2, None):
        try:
            return json.dumps(value, indent=indent, ensure_ascii=False)
        except RecursionError:
            pass
    return "(nested too deep to show)"


def message_line(message: object) -> str:
    if isinstance(message, dict):
        return f"{message.get('role')}: {content_text(message.get('content'))}"
    return str(message)


def media_of(messages: Iterable[object]) -> list[MediaRow]:
    """The non-text parts of the user messages and tool results, in order."""
    rows: list[MediaRow] = []
    for message in messages:
        if isinstance(message, Message) and message.role in ("user", "tool"):
            if not isinstance(message.content, str):
                rows += [_row(p) for p in message.content if part_text(p) is None]
    return rows


def _row(part: object) -> MediaRow:
    if isinstance(part, ImagePart):
        src = data_url(part) if part.data is not None else None
        return {"kind": "image", "media_type": part.media_type, "src": src, "label": _label(part)}
    if isinstance(part, dict) and part.get("type") == "image_url":
        image = part.get("image_url")
        url = str(image.get("url", "") if isinstance(image, dict) else image)
        src = url if url.startswith("data:image/") else None
        return {"kind": "image", "media_type": None, "src": src, "label": _label(part)}
    kind = getattr(part, "kind", None) or str(part.get("type") if isinstance(part, dict) else "?")
    return {
        "kind": kind,
        "media_type": getattr(part, "media_type", None),
        "src": None,
        "label": _label(part),
    }


def _label(part: object) -> str:
    """A line naming a part: its kind, media type and size or URL."""
    if isinstance(part, ImagePart | DocumentPart | AudioPart):
        where = f"{len(part.data)} bytes" if part.data is not None else str(part.url)
        return f"{part.kind} ({part.media_type or 'by URL'}, {where})"
    if isinstance(part, dict):
        return f"{part.get('type', '?')} part"
    return repr(part)


def render_media(rows: Iterable[MediaRow], out: list[str]) -> None:
    """Each image as ``<img>`` (a ``data:`` URL), every other part as a line naming it."""
    for row in rows:
        label = esc(row["label"])
        if row["src"] is not None:
            out.append(
                f"<figure class='media'><img src=\"{html.escape(row['src'], quote=True)}\" "
                f'alt="{label}"><figcaption>{label}</figcaption></figure>'
            )
        else:
            out.append(f"<div class='media'>{label} (not loaded: the page fetches nothing)</div>")
