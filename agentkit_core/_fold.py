"""The fold: the older part of a run's transcript becomes one summary the transcript keeps.

A summarizing compactor run on every request summarizes again on every call past its threshold,
and the summary is lost with the request. :class:`Folding` instead replaces the folded messages
in the run's own transcript (and so in its checkpoint), so later calls send the summary and no
summary is written twice. It runs once per turn in the transform position, after the product's
transforms and before the request is built: outside the retry middleware, so a retried call never
folds again. The summary itself (writing it, refusing one no smaller than what it replaces) is
shared with the ``summarization`` compactor through :func:`write_summary` and :func:`fold_cut`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._errors import ConfigError
from ._messages import Message
from ._models import ModelRequest
from ._records import record
from ._run_errors import BudgetExceeded
from ._run_errors import FoldError
from ._tokens import Estimator
from ._tokens import estimate_message
from ._tokens import estimate_tokens
from ._tracing import Span

if TYPE_CHECKING:
    from ._context import RunContext
    from ._models import Model
    from ._run_state import RunState
    from ._units import Unit

#: What a compaction-written message (a summary) carries in ``Message.metadata["compaction"]``.
SUMMARY = "summary"

#: ``async (messages, ctx) -> summary text``: writes the summary of the messages folded.
Summarizer = Callable[[list[Message], "RunContext"], Awaitable[str]]

#: The system message of the summary request when a model writes the summary.
SUMMARY_INSTRUCTIONS = (
    "You compress conversations. Summarize the transcript you are given so that an assistant "
    "can carry on without it: keep facts, decisions, open questions, names, numbers and what "
    "each tool returned. Answer with the summary only."
)

#: First line of a summary message, so the model reading it knows what it is.
SUMMARY_HEADER = "Summary of the earlier conversation:"


@record(frozen=True, slots=True)
class Fold:
    """One fold a run made or tried, as its observers hear it.

    ``folded`` are the run's messages the summary replaces, from index ``start`` of the
    transcript; ``summary`` is the message that replaced them, or None when the fold failed, and
    ``error`` then says why (the transcript was sent whole). Tokens are estimates of the request
    before and after the fold (equal when it failed). ``encode_state(fold)`` gives it as JSON.
    """

    start: int
    folded: tuple[Message, ...]
    summary: Message | None
    tokens_before: int
    tokens_after: int
    error: str | None = None


#: ``(ctx, fold) -> None``, or a coroutine function: told of every fold, failed ones too.
FoldObserver = Callable[["RunContext", Fold], Awaitable[None] | None]


def render_transcript(messages: Sequence[Message], sep: str = "\n\n") -> str:
    """Messages as plain text for a model to read: who said what, each call, each result."""
    blocks = []
    for m in messages:
        who = f"tool {m.name or ''} result ({m.tool_call_id})" if m.role == "tool" else m.role
        lines = [f"{who}: {m.text}"]
        lines.extend(f"  calls {c.name}({c.arguments}) as {c.id}" for c in m.tool_calls)
        blocks.append("\n".join(lines))
    return sep.join(blocks)


def fold_cut(
    messages: Sequence[Message], keep_recent: int, *, head: int, estimate: Estimator | None = None
) -> int:
    """Where the kept tail starts: after it, the newest whole units within ``keep_recent``.

    Messages ``[head, cut)`` are what a fold replaces; ``cut <= head`` means there is nothing
    older than the tail. Walks back from the end, so it costs what is kept.
    """
    from ._units import recent_units  # the units load with a fold's first cut, not at import
    from ._units import units_from_end

    tail = recent_units(units_from_end(messages, estimate, head=head), keep_recent, _tokens)
    return tail[0].start if tail else len(messages)


def _tokens(unit: Unit) -> int:
    return int(unit.tokens)


async def write_summary(
    old: Sequence[Message],
    ctx: RunContext,
    *,
    summarizer: Summarizer | None = None,
    model: Model | None = None,
    instructions: str = SUMMARY_INSTRUCTIONS,
    estimate: Estimator | None = None,
    source: str = "the fold",
) -> Message:
    """The summary message that replaces ``old``, or :class:`FoldError` saying why not.

    ``summarizer`` writes it, or else ``model`` (default: the run's own), called through the
    run's middleware chain so its cost lands on the run. The summary fails when the writer
    raises, answers nothing, is cut short, or is no smaller than ``old``. A
    :class:`BudgetExceeded` is not a failed summary: it propagates.
    """
    from ._compaction import compacting

    write = summarizer or _model_summarizer(ctx, model, instructions, source)
    try:
        with compacting():
            text = (await write(list(old), ctx)).strip()
    except (BudgetExceeded, FoldError):
        raise
    except Exception as exc:
        raise FoldError(f"the summarizer failed: {type(exc).__name__}: {exc}") from exc
    if not text:
        raise FoldError("the summarizer returned an empty summary")
    summary = Message(
        "user", f"{SUMMARY_HEADER}\n{text}", metadata={"compaction": SUMMARY, "replaces": len(old)}
    )
    count = estimate or estimate_tokens
    cost, replaced = count([summary]), count(old)
    if cost >= replaced:
        raise FoldError(
            f"the summary ({cost} tokens) is no smaller than the {len(old)} messages it would "
            f"replace ({replaced} tokens)"
        )
    return summary


def _model_summarizer(
    ctx: RunContext, model: Model | None, instructions: str, source: str
) -> Summarizer:
    invoker = ctx.invoker_for(model, source=source, hint="pass model= or summarizer=")

    async def write(old: list[Message], ctx: RunContext) -> str:
        request = ModelRequest(
            (Message.system(instructions), Message.user(render_transcript(old))),
            ctx=ctx,
            metadata={"compaction": "summary"},
        )
        response = await invoker.chat(request)
        if response.finish_reason == "length":
            raise FoldError("the summary was cut short (finish_reason 'length')")
        return response.message.text

    return write


class Folding:
    """Folds a run's transcript into a summary once it grows past ``budget`` tokens.

    Pass it as ``Agent(compaction=...)`` (``Kit(compaction={...})`` builds one from the same
    keywords). Each turn, after the transform hooks, the request about to be sent is measured;
    past ``budget``, the run's messages older than the newest ``keep_recent`` tokens (default:
    half the budget) of whole units are replaced, in the run's transcript, by one summary
    message, so the checkpoint keeps it and later turns send it. The leading system messages
    (the prefix) are never folded.

    The summary is written by ``summarizer=`` or ``model=`` (a Model: ``Kit(compaction=)``
    resolves a model string), or else the run's own model. It is written from the messages as the
    transforms left them (what the model would have been sent). A fold that fails (the writer
    raised, answered nothing, was cut short or no smaller) sends the transcript whole and backs
    off: no new attempt until the transcript has grown past the point that failed, that is
    until the part kept verbatim starts after the end of the transcript the failed fold saw.
    Every ``on_fold`` observer hears every fold, failed ones too, as a :class:`Fold`.
    """

    def __init__(
        self,
        budget: int,
        *,
        keep_recent: int | None = None,
        summarizer: Summarizer | None = None,
        model: Model | None = None,
        instructions: str = SUMMARY_INSTRUCTIONS,
        estimate: Estimator | None = None,
        on_fold: FoldObserver | Sequence[FoldObserver] = (),
    ) -> None:
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
            raise ConfigError(
                f"the fold's budget must be a positive number of tokens, got {budget!r}",
                value=budget,
                source="Folding(budget=)",
            )
        keep = max(1, budget // 2) if keep_recent is None else keep_recent
        if not isinstance(keep, int) or isinstance(keep, bool) or not 1 <= keep < budget:
            raise ConfigError(
                f"keep_recent must be a number of tokens from 1 to below the budget ({budget}), "
                f"got {keep_recent!r}",
                value=keep_recent,
                source="Folding(keep_recent=)",
            )
        if summarizer is not None and model is not None:
            raise ConfigError(
                "Folding got both summarizer= and model=; pass one (model= is the model that "
                "writes the summary, summarizer= writes it yourself)",
                source="Folding",
            )
        observers = (on_fold,) if callable(on_fold) else tuple(on_fold)
        for fn in observers:
            if not callable(fn):
                raise ConfigError(
                    f"on_fold takes functions (ctx, fold) -> None, got {fn!r}",
                    value=fn,
                    source="Folding(on_fold=)",
                )
        if isinstance(model, str):
            raise ConfigError(
                f"Folding(model=) takes a Model, got the name {model!r}: resolve it with "
                f"resolve_model({model!r}, manager=...), or give it as "
                f"Kit(compaction={{'model': {model!r}, ...}})",
                value=model,
                source="Folding(model=)",
            )
        self.budget = budget
        self.keep_recent = keep
        self.summarizer = summarizer
        self.model = model
        self.instructions = instructions
        self.estimate = estimate
        self.on_fold: tuple[FoldObserver, ...] = observers

    def __repr__(self) -> str:
        return f"Folding(budget={self.budget}, keep_recent={self.keep_recent})"

    async def apply(self, ctx: RunContext, state: RunState, view: list[Message]) -> list[Message]:
        """Fold ``state.transcript`` if ``view`` (what the transforms made of it) is over budget.

        Returns the messages to send: ``view`` itself when it did not fold (under the budget,
        backing off, or failed), else a new list with the summary in place of what it folded.
        """
        if self._within(view):
            return view
        from ._units import head_length

        transcript = state.transcript
        head = head_length(transcript, all_system=True)
        cut = fold_cut(transcript, self.keep_recent, head=head, estimate=self.estimate)
        if cut <= head:
            return view  # one turn larger than the budget on its own: nothing older to fold
        if state.fold_backoff is not None and cut < state.fold_backoff:
            return view  # the last fold failed, and the transcript has not outgrown it yet
        count = self.estimate or estimate_tokens
        old = tuple(transcript[head:cut])
        with ctx.trace.span("fold", budget=self.budget) as span:
            before = count(view)
            try:
                view_head, view_cut = _locate(view, transcript, head, cut)
                summary = await write_summary(
                    view[view_head:view_cut],
                    ctx,
                    summarizer=self.summarizer,
                    model=self.model,
                    instructions=self.instructions,
                    estimate=self.estimate,
                )
            except FoldError as exc:
                state.fold_backoff = len(transcript)
                span.set("fold_error", str(exc))
                await self._tell(ctx, Fold(head, old, None, before, before, str(exc)), span)
                return view
            sent = [*view[:view_head], summary, *view[view_cut:]]
            # a new list: the requests made so far are views of the old one (TranscriptView)
            state.transcript = [*transcript[:head], summary, *transcript[cut:]]
            state.fold_backoff = None
            after = count(sent)
            span.set("fold_messages", len(old))
            span.set("fold_tokens_before", before)
            span.set("fold_tokens_after", after)
            await self._tell(ctx, Fold(head, old, summary, before, after), span)
            return sent

    def _within(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` fit the budget; reads back only until they do not."""
        total = 0
        estimate = self.estimate
        for m in reversed(messages):
            total += estimate([m]) if estimate is not None else estimate_message(m)
            if total > self.budget:
                return False
        return True

    async def _tell(self, ctx: RunContext, fold: Fold, span: Span) -> None:
        """The run's session records ``fold`` first; then every observer hears it.

        An observer that raises is named on the span, not fatal. The span's payload keeps what
        was folded and the summary, for trace exporters.
        """
        ctx.recorder.record_fold(ctx, fold)
        span.payload["folded"] = fold.folded
        span.payload["summary"] = fold.summary
        for fn in self.on_fold:
            try:
                out = fn(ctx, fold)
                if inspect.isawaitable(out):
                    await out
            except Exception as exc:
                name = getattr(fn, "__qualname__", repr(fn))
                span.set("fold_observer_error", f"{name}: {type(exc).__name__}: {exc}")


def _locate(
    view: Sequence[Message], transcript: Sequence[Message], head: int, cut: int
) -> tuple[int, int]:
    """Where, in what the transforms made of the transcript, the fold's part lies.

    The part starts after the view's leading system messages and ends at the first message that
    is (the same object as) one of the transcript's kept tail; a view that keeps none of them,
    or nothing before them, gives the fold nothing it can safely replace.
    """
    if view is transcript:
        return head, cut
    from ._units import head_length

    recent = {id(m) for m in transcript[cut:]}
    start = head_length(view, all_system=True)
    end = next((i for i in range(start, len(view)) if id(view[i]) in recent), None)
    if end is None:
        raise FoldError(
            "the transform hooks returned none of the transcript's recent messages, so the fold "
            "cannot tell which of the messages sent it would replace"
        )
    if end == start:
        raise FoldError(
            "the transform hooks returned nothing older than the transcript's recent messages, "
            "so there is nothing to summarize"
        )
    return start, end
