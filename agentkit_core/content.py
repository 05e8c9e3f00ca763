"""Typed content parts for a run's task and a message's content (docs/content.md).

``agent.run(["What is in this picture?", ImagePart(data=png, media_type="image/png")])``:
a task is a string or a sequence of strings and parts. Each provider plugin converts the parts
it takes and refuses the others with :class:`UnsupportedPartError`.
"""

from __future__ import annotations

from ._content import MAX_PART_BYTES
from ._content import AudioPart
from ._content import ContentError
from ._content import DocumentPart
from ._content import ImagePart
from ._content import Part
from ._content import Task
from ._content import TextPart
from ._content import UnsupportedPartError
from ._content import b64
from ._content import content_text
from ._content import data_url
from ._content import part_text
from ._public import publish

__all__ = [
    "MAX_PART_BYTES",
    "AudioPart",
    "ContentError",
    "DocumentPart",
    "ImagePart",
    "Part",
    "Task",
    "TextPart",
    "UnsupportedPartError",
    "b64",
    "content_text",
    "data_url",
    "part_text",
]

publish(__all__, globals(), __name__)
