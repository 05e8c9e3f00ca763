"""The message filter: what of the conversation a model call leaves out (``Kit(message_filter=)``).

A host keeps its own notes in a conversation (a UI's "file uploaded" line, an operator's
remark) marked app-only, ``Message(..., metadata={APP_ONLY: True})``: recorded in the session
with the rest, never sent. :func:`drop_app_only` is the filter that leaves them out;
:func:`checked_filter` wraps any filter so that it can never drop what the model must see.
agentkit's own app-only records (verdicts, manifests, folds, approvals) are session items,
never messages, so a kit without a filter has nothing to leave out and scans nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Final

from ._errors import HookError
from ._messages import Message

#: The ``Message.metadata`` key that marks a message app-only (recorded, never sent).
APP_ONLY: Final = "agentkit.app_only"

#: A message filter: the messages a model call is sent, from the conversation's.
MessageFilter = Callable[[Sequence[Message]], Sequence[Message]]


def drop_app_only(messages: Sequence[Message]) -> list[Message]:
    """``messages`` less the ones marked app-only (``metadata[APP_ONLY]``).

    A tool call's result and the last user message are kept even when marked: the model must
    see them.
    """
    last_user = _last_user(messages)
    return [
        m
        for i, m in enumerate(messages)
        if not (m.metadata.get(APP_ONLY) and m.role != "tool" and i != last_user)
    ]


def checked_filter(
    fn: MessageFilter, source: str = "message_filter="
) -> Callable[[object, Sequence[Message]], list[Message]]:
    """``fn`` as a ``transform`` hook that refuses to drop what the model must see.

    Kept must be the last user message, every result of a call whose assistant message is
    kept, and the call of every result that is kept (a provider refuses either alone). A filter
    that breaks this, or returns something else than messages, is a :class:`HookError` naming
    it and what it dropped.
    """
    name = getattr(fn, "__qualname__", None) or repr(fn)

    def transform(ctx: object, transcript: Sequence[Message]) -> list[Message]:
        kept = list(fn(transcript))
        if not all(isinstance(m, Message) for m in kept):
            raise _refused(name, source, f"returned {kept!r}, not a list of Messages")
        missing = _dropped_needed(transcript, kept)
        if missing:
            raise _refused(name, source, f"dropped {missing}, which the model must see")
        return kept

    return transform


def _last_user(messages: Sequence[Message]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return -1


def _dropped_needed(given: Sequence[Message], kept: Sequence[Message]) -> str:
    """What of ``given`` the model must see and ``kept`` lacks, in words; "" when nothing."""
    ids = {id(m) for m in kept}
    last_user = _last_user(given)
    if last_user >= 0 and id(given[last_user]) not in ids:
        return f"the last user message {given[last_user].text[:80]!r}"
    called = {c.id for m in kept if m.role == "assistant" for c in m.tool_calls}
    answered = {m.tool_call_id for m in given if m.role == "tool"}
    for m in given:
        if m.role == "tool" and m.tool_call_id in called and id(m) not in ids:
            return f"the result of call {m.tool_call_id!r}"
    for m in kept:
        if m.role == "tool" and m.tool_call_id not in called and m.tool_call_id in answered:
            return f"the assistant message that made call {m.tool_call_id!r} (its result is kept)"
    return ""


def _refused(name: str, source: str, what: str) -> HookError:
    return HookError(
        f"the message filter {name} ({source}) {what}; a filter may leave out only what the "
        "model need not see (app-only notes), never a call's result, its call or the last "
        "user message",
        plugin="user",
        hook="message_filter",
    )
