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
from typing import overload
from typing import runtime_checkable

from ._messages import Message
from ._messages import TranscriptView
from ._messages import starts_with
from ._middleware import CallModel
from ._middleware import Middleware
from ._models import ModelRequest
from ._models import ModelResponse
from ._run_errors import PendingToolCallError
from ._run_errors import RunError
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

    ``messages`` is a read-only sequence over the request (not a copy: a compactor pays for
    what it reads); a slice of it is a list. A compactor that edits in place copies first.
    """

    async def compact(self, messages: Sequence[Message], ctx: RunContext) -> Sequence[Message]: ...


class _Transcript(Sequence[Message]):
    """The messages a compactor gets: a read-only view, copying nothing.

    Compactors used to get a list copy of every request, a cost in the transcript's length
    (2-3 ms at 100,000 messages) whatever they keep. Slicing still gives a list, so one that
    slices and joins (``messages[:1] + [summary]``) works as it did.
    """

    __slots__ = ("_messages",)

    def __init__(self, messages: Sequence[Message]) -> None:
        self._messages = messages

    def __len__(self) -> int:
        return len(self._messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return list(self._messages[index])
        return self._messages[index]

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __reversed__(self) -> Iterator[Message]:
        return reversed(self._messages)

    def __add__(self, other: Sequence[Message]) -> list[Message]:
        return [*self._messages, *other]

    def __radd__(self, other: Sequence[Message]) -> list[Message]:
        return [*other, *self._messages]

    def __repr__(self) -> str:
        return f"<transcript of {len(self._messages)} messages>"


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
    compactor: Compactor, messages: Sequence[Message], ctx: RunContext
) -> Sequence[Message]:
    """``compactor.compact`` on a read-only view of ``messages``, not on a copy.

    ``messages`` itself comes back when the compactor returns the view; the call is marked so
    the compactor's own model calls are not compacted.
    """
    view = _Transcript(messages)
    with compacting():
        after = await compactor.compact(view, ctx)
    return messages if after is view else after


class _Compaction(Middleware):
    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor
        # Per run: the last request's messages and their estimate, when that was known
        # without reading what was dropped. A run's next request is that transcript with new
        # messages after it, so its count costs only the new ones.
        self._counted: weakref.WeakKeyDictionary[RunContext, tuple[Sequence[Message], int]] = (
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
            # nothing copies or reads the whole transcript: only what is kept, what is new
            # since the run's last request and what the compactor looks at
            after = await run_compactor(self.compactor, before, ctx)
            reason = _rejection(before, after)
            if reason is not None:
                span.set("compaction_rejected", reason)
                after = before
            else:
                kept = estimate_tokens(after)
                span.set("compaction_messages_before", len(before))
                span.set("compaction_messages_after", len(after))
                tokens = self._tokens_before(ctx, before, after, kept)
                if tokens is not None:
                    span.set("compaction_tokens_before", tokens)
                span.set("compaction_tokens_after", kept)
        sent = tuple(repaired(after, span))
        if sent == before:
            return await call_next(request)
        return await call_next(replace(request, messages=sent))

    def _tokens_before(
        self,
        ctx: RunContext,
        before: Sequence[Message],
        after: Sequence[Message],
        kept: int,
    ) -> int | None:
        """The estimate of the whole request if it is known without reading what was dropped.

        It is when nothing was dropped (``kept``), or when the request extends the run's last
        one whose estimate was known (that, plus the new messages). Otherwise ``None``: a run's
        first request over a long history would estimate every message only for the span.
        """
        tokens: int | None = None
        if after is before:
            tokens = kept
        else:
            last = self._counted.get(ctx)
            if last is not None and _frozen(before) and starts_with(before, last[0]):
                tokens = last[1] + estimate_tokens(before[len(last[0]) :])
        if tokens is not None and _frozen(before):  # a list may change after the call
            self._counted[ctx] = (before, tokens)
        else:
            self._counted.pop(ctx, None)
        return tokens


def _frozen(messages: Sequence[Message]) -> bool:
    """Whether ``messages`` cannot change after the call: a tuple, or a transcript's view."""
    return type(messages) is tuple or type(messages) is TranscriptView


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
    The span also records the message counts before and after, the estimate of what is sent
    (``compaction_tokens_after``) and, when it is known without reading the messages dropped,
    of the whole request (``compaction_tokens_before``). Whatever the compactor
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
