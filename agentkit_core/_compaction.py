"""Compaction: the Compactor seam and the ``compaction()`` middleware.

Where a transcript may be cut is :mod:`._units`' business (every compactor uses it); this
module runs a compactor on each request and repairs whatever no request may carry before the
request leaves.
"""

from __future__ import annotations

import contextlib
import contextvars
import weakref
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Protocol
from typing import runtime_checkable

from ._errors import PendingToolCallError
from ._errors import RunError
from ._messages import Message
from ._middleware import CallModel
from ._middleware import Middleware
from ._models import ModelRequest
from ._models import ModelResponse
from ._tokens import estimate_tokens
from ._tracing import Span
from ._tracing import current_span
from ._units import pending_calls
from ._units import repair_transcript

if TYPE_CHECKING:
    from ._context import RunContext


@runtime_checkable
class Compactor(Protocol):
    """Shrinks a transcript: ``async compact(messages, ctx) -> messages``.

    Each implementation owns its threshold: a transcript already small enough comes back
    unchanged, so callers need no guard. A transcript it does shorten keeps a leading system
    message verbatim, is the input with messages left out (and summaries added), holds no tool
    result without the call it answers and no call without its result (pairs found by id, so
    whatever sits between them), and is never empty.
    """

    async def compact(self, messages: list[Message], ctx: RunContext) -> list[Message]: ...


# Set while a compactor runs, so the model calls it makes (a summary, a filter) pass the
# compaction() middleware untouched instead of being compacted again.
_compacting: contextvars.ContextVar[bool] = contextvars.ContextVar("compacting", default=False)


@contextlib.contextmanager
def compacting() -> Iterator[None]:
    """Mark the block as compaction's own work: its model calls pass compaction() untouched."""
    token = _compacting.set(True)
    try:
        yield
    finally:
        _compacting.reset(token)


async def run_compactor(
    compactor: Compactor, messages: list[Message], ctx: RunContext
) -> list[Message]:
    """``compactor.compact(messages, ctx)``, marked so its own model calls are not compacted."""
    with compacting():
        return await compactor.compact(messages, ctx)


class _Compaction(Middleware):
    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor
        # Per run: the last request's messages and their estimate. A run's next request is
        # that transcript with new messages after it, so its count costs only the new ones;
        # without this, the span's token count estimated every message of every request,
        # the dropped ones too (a cost in the transcript's length, not in what is kept).
        self._counted: weakref.WeakKeyDictionary[RunContext, tuple[tuple[Message, ...], int]] = (
            weakref.WeakKeyDictionary()
        )

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        if _compacting.get():  # a compactor's own call (a summary): not ours to touch
            return await call_next(request)
        span = current_span()
        before = request.messages
        refuse_pending(before)
        after: Sequence[Message] = before
        ctx = request.ctx
        if ctx is not None:
            # the compactor gets a list of its own (it may be changed); nothing else copies or
            # reads the whole transcript: only what is kept and what the compactor looks at
            after = await run_compactor(self.compactor, list(before), ctx)
            reason = _rejection(before, after)
            if reason is not None:
                span.set("compaction_rejected", reason)
                after = before
            else:
                span.set("compaction_messages_before", len(before))
                span.set("compaction_messages_after", len(after))
                span.set("compaction_tokens_before", self._tokens(ctx, before))
                span.set("compaction_tokens_after", estimate_tokens(after))
        sent = tuple(repaired(after, span))
        if sent == before:
            return await call_next(request)
        return await call_next(replace(request, messages=sent))

    def _tokens(self, ctx: RunContext, messages: Sequence[Message]) -> int:
        """``estimate_tokens(messages)``, counting only what followed the run's last request."""
        if type(messages) is not tuple:  # a list may have changed since: count it all
            return estimate_tokens(messages)
        last = self._counted.get(ctx)
        if last is not None and _starts_with(messages, last[0]):
            tokens = last[1] + estimate_tokens(messages[len(last[0]) :])
        else:
            tokens = estimate_tokens(messages)
        self._counted[ctx] = (messages, tokens)
        return tokens


def _starts_with(messages: tuple[Message, ...], prefix: tuple[Message, ...]) -> bool:
    """Whether ``messages`` begins with the messages of ``prefix``, copying neither.

    Tuple ordering walks both to the first position where they differ, comparing identical
    messages by address alone (no message is read, so a long prefix costs a pointer scan);
    messages define no order, so a difference raises TypeError.
    """
    n = len(prefix)
    if not n or len(messages) < n or messages[n - 1] is not prefix[-1]:
        return False
    try:
        return prefix <= messages
    except TypeError:
        return False


def refuse_pending(messages: Sequence[Message]) -> None:
    """Raise :class:`PendingToolCallError` when the transcript ends on calls with no result."""
    waiting = pending_calls(messages)
    if waiting:
        names = ", ".join(f"{c.name} ({c.id!r})" for c in waiting)
        raise PendingToolCallError(
            f"the request ends on tool calls still waiting for their result: {names}; run "
            "them (or resume the suspended run with approvals) before calling the model",
            calls=waiting,
            transcript=list(messages),
        )


def repaired(messages: Sequence[Message], span: Span) -> list[Message]:
    """``messages`` without what no provider accepts; a repair is stamped on ``span``."""
    out, repair = repair_transcript(messages)
    if repair is not None:
        span.set("compaction_repaired", str(repair))
        span.set("compaction_repaired_messages", len(repair.dropped))
        if not out:
            raise RunError(
                f"the request holds nothing a provider accepts ({repair}); start the "
                "transcript with a user message",
                transcript=list(messages),
            )
    return out


def _rejection(before: Sequence[Message], after: Sequence[Message]) -> str | None:
    if not after:
        return "the compactor returned no messages"
    if before and before[0].role == "system" and after[0] != before[0]:
        return "the compactor dropped or altered the leading system message"
    return None


def compaction(compactor: Compactor) -> Middleware:
    """Run ``compactor`` on every assembled request (prefix and tail) before the model.

    A rewrite that returns no messages, or that drops or alters the leading system message,
    is refused: the request goes on whole and the span says why (``compaction_rejected``).
    The span also records message and token counts before and after. Whatever the compactor
    returned (or when it is refused or skips), what no provider accepts is dropped before the
    request leaves (orphaned results, calls with no result; ``compaction_repaired`` on the
    span), and a request that ends on calls still waiting for their result is refused with
    :class:`PendingToolCallError`. A name is refused: names belong to the lookup layer
    (:func:`get_compactor`).
    """
    if not isinstance(compactor, Compactor) or isinstance(compactor, type):
        from ._errors import ConfigError

        hint = repr(compactor) if isinstance(compactor, str) else "'truncation'"
        raise ConfigError(
            f"compaction() needs a Compactor object (async compact(messages, ctx)), got "
            f"{compactor!r}; build an installed one with get_compactor({hint}, manager=pm)",
            value=compactor,
            source="compaction",
        )
    return _Compaction(compactor)
