"""``agentkit run --attach FILE``: files read into content parts beside the task's text."""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Sequence

from .._content import AUDIO_TYPES
from .._content import DOCUMENT_TYPES
from .._content import IMAGE_TYPES
from .._content import MAX_PART_BYTES
from .._content import AudioPart
from .._content import ContentError
from .._content import DocumentPart
from .._content import ImagePart
from .._content import Part
from .._content import Task
from .._content import normal_media_type
from .._errors import ConfigError

_KINDS = ", ".join(sorted(IMAGE_TYPES | DOCUMENT_TYPES | AUDIO_TYPES))


def attached_task(text: str, files: Sequence[str]) -> Task:
    """``text`` alone, or the text followed by one part per file, in the order given."""
    if not files:
        return text
    parts: list[str | Part] = [text] if text.strip() else []
    parts.extend(attachment(path) for path in files)
    return parts


def attachment(path: str) -> Part:
    """The file at ``path`` as a part, its media type from its suffix.

    Refused when the suffix is unknown or unsupported, or the file is over
    :data:`MAX_PART_BYTES` (checked before reading it).
    """
    guessed, _ = mimetypes.guess_type(path)
    media = normal_media_type(guessed or "")
    if media not in IMAGE_TYPES | DOCUMENT_TYPES | AUDIO_TYPES:
        raise ConfigError(
            f"--attach {path}: {'media type ' + repr(guessed) if guessed else 'its suffix'} "
            f"is not one agentkit sends; attach a file of one of {_KINDS} (by its suffix: "
            ".png, .jpg, .gif, .webp, .pdf, .wav, .mp3, ...)",
            value=path,
            source="--attach",
        )
    try:
        size = os.path.getsize(path)
        if size > MAX_PART_BYTES:
            raise ConfigError(
                f"--attach {path}: {size} bytes is over the limit of {MAX_PART_BYTES} bytes; "
                "attach a smaller or compressed file",
                value=path,
                source="--attach",
            )
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise ConfigError(
            f"--attach {path}: cannot read it ({exc.strerror}); check the path",
            value=path,
            source="--attach",
        ) from exc
    try:
        if media in IMAGE_TYPES:
            return ImagePart(data=data, media_type=media)
        if media in DOCUMENT_TYPES:
            return DocumentPart(data=data, media_type=media, name=os.path.basename(path))
        return AudioPart(data, media)
    except ContentError as exc:  # the size grew between the check and the read
        raise ConfigError(f"--attach {path}: {exc}", value=path, source="--attach") from exc
