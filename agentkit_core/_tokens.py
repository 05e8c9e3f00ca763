"""The one token estimator.

Every piece of agentkit that estimates tokens (the request builder, the compactors, the
compaction middleware, budgets) calls :func:`estimate_tokens`. It is a crude pre-call figure, about
four characters a token, and it counts what is easy to forget: tool-call names and arguments and
tool results, not only the text content. The authoritative count is the provider's ``Usage``.

Public as ``agentkit_core.plugin.estimate_tokens`` / ``estimate_message`` / ``Estimator``: plugins
(compactors, budgets) must count the way core does, so the estimator is part of the contract;
the module itself is private like every other.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable

from ._messages import Message

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD",
    "Estimator",
    "estimate_message",
    "estimate_tokens",
]

#: Characters counted as one token.
CHARS_PER_TOKEN = 4
#: Tokens charged per message for its role and framing.
MESSAGE_OVERHEAD = 4

#: The shape of an estimator a caller may pass as ``estimate=``.
Estimator = Callable[[Iterable[Message]], int]


def estimate_message(message: Message) -> int:
    """Estimated tokens of one message: content, tool-call names and arguments, framing."""
    content = message.content
    if isinstance(content, str):
        chars = len(content)
    else:
        chars = sum(len(str(part.get("text", ""))) or 256 for part in content)
    for call in message.tool_calls:
        chars += len(call.name) + len(call.arguments) + len(call.id)
    return MESSAGE_OVERHEAD + (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_tokens(messages: Iterable[Message]) -> int:
    """Estimated tokens of a transcript: the sum of :func:`estimate_message` over it."""
    return sum(estimate_message(m) for m in messages)
