"""The one token estimator.

Every piece of agentkit that estimates tokens (the request builder, the compactors, the
compaction middleware, budgets) calls :func:`estimate_tokens`. It is a crude pre-call figure, about
four ASCII characters a token and one token for every other character, and it counts what is easy
to forget: tool-call names and arguments and tool results, not only the text content. The
authoritative count is the provider's ``Usage``.

Public as ``agentkit_core.plugin.estimate_tokens`` / ``estimate_message`` / ``Estimator``: plugins
(compactors, budgets) must count the way core does, so the estimator is part of the contract;
the module itself is private like every other.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable

from ._content import AudioPart
from ._content import DocumentPart
from ._content import ImagePart
from ._content import TextPart
from ._messages import Message
from ._messages import TranscriptView

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD",
    "Estimator",
    "estimate_message",
    "estimate_tokens",
]

#: ASCII characters counted as one token.
CHARS_PER_TOKEN = 4
#: Tokens charged per message for its role and framing.
MESSAGE_OVERHEAD = 4

#: Tokens of an image, whatever its size: the most Anthropic charges (an image scaled to about
#: 1.15 megapixels, (w*h)/750), above OpenAI's high-detail 1024x1024 (765) and Gemini's 258
#: per tile; the estimate errs high so that a budget holds.
IMAGE_TOKENS = 1600
#: Tokens of one PDF page: Anthropic sends each page as its text and an image of it, "typically
#: 1,500-3,000 tokens a page"; the top of that range. A PDF by URL counts as one page.
DOCUMENT_PAGE_TOKENS = 3000
#: Tokens of one KiB of audio: Gemini charges 32 tokens a second, and 16 KiB is about a second
#: of 128 kbit/s compressed audio (uncompressed WAV runs longer per KiB, so it is overcounted).
AUDIO_KIB_TOKENS = 2
#: Characters charged for an OpenAI-style dict part without text (an ``image_url``, say).
DICT_PART_CHARS = 256

#: The shape of an estimator a caller may pass as ``estimate=``.
Estimator = Callable[[Iterable[Message]], int]


def estimate_message(message: Message) -> int:
    """Estimated tokens of one message: content, tool-call names and arguments, framing."""
    content = message.content
    parts = 0
    if isinstance(content, str):
        chars = _chars(content)
    else:
        chars = 0
        for part in content:
            if isinstance(part, dict):
                chars += _chars(str(part.get("text", ""))) or DICT_PART_CHARS
            elif isinstance(part, TextPart):
                chars += _chars(part.text)
            else:
                parts += part_tokens(part)
    for call in message.tool_calls:
        chars += _chars(call.name) + _chars(call.arguments) + _chars(call.id)
    return MESSAGE_OVERHEAD + parts + (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _chars(text: str) -> int:
    """``text``'s length in ASCII characters' worth: any other character weighs a whole token.

    Tokenizers learn English: a CJK character, an emoji or a combining mark costs a token or
    more in every provider's, so counting it as a quarter of one would let such text past a
    budget several times over (the estimate errs high so that a budget holds).
    """
    if text.isascii():  # constant time: the string knows it
        return len(text)
    return len(text) + (CHARS_PER_TOKEN - 1) * (len(text) - len(text.encode("ascii", "ignore")))


#: A PDF page object (``/Type /Page``, not the ``/Pages`` tree): counted to estimate pages.
#: The text, compiled (by ``re``'s cache) when a document is first measured: most runs have none.
_PDF_PAGE = rb"/Type\s*/Page(?![a-zA-Z])"


def part_tokens(part: ImagePart | DocumentPart | AudioPart) -> int:
    """Estimated tokens of one non-text part (the figures above, docs/content.md)."""
    if isinstance(part, ImagePart):
        return IMAGE_TOKENS
    if isinstance(part, DocumentPart):
        pages = len(re.findall(_PDF_PAGE, part.data)) if part.data is not None else 1
        return DOCUMENT_PAGE_TOKENS * max(pages, 1)
    return AUDIO_KIB_TOKENS * max(1, -(-len(part.data) // 1024))


def estimate_tokens(messages: Iterable[Message]) -> int:
    """Estimated tokens of a transcript: the sum of :func:`estimate_message` over it."""
    return sum(estimate_message(m) for m in messages)


class SentTokens:
    """A run's request estimates, each in time proportional to the messages new since the last.

    A request whose messages are a view of the same transcript as the previous one's (the
    loop's requests are, turn after turn) adds only its new messages' estimates to the last
    count; any other is estimated whole. A budget's checks ask it before every call.
    """

    __slots__ = ("_last", "_tokens")

    def __init__(self) -> None:
        self._last: TranscriptView | None = None
        self._tokens = 0

    def __call__(self, messages: Iterable[Message]) -> int:
        if not isinstance(messages, TranscriptView):
            return estimate_tokens(messages)
        new = None if self._last is None else messages.after(self._last)
        if new is not None:
            tokens = self._tokens
            for message in new:  # a turn's two or three: no generator
                tokens += estimate_message(message)
        else:
            tokens = estimate_tokens(messages)
        self._last, self._tokens = messages, tokens
        return tokens
