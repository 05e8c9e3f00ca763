"""The ``summarization`` compactor: replace the older middle with one summary message."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import hookimpl
from agentkit_core.plugin import FoldError
from agentkit_core.plugin import current_span
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import resolve_model_option

if TYPE_CHECKING:
    from agentkit_core.plugin import SUMMARY_HEADER as HEADER
    from agentkit_core.plugin import SUMMARY_INSTRUCTIONS as INSTRUCTIONS
    from agentkit_core.plugin import CompactorFactory
    from agentkit_core.plugin import Register
    from agentkit_core.plugin import Summarizer

    from ._options import SummarizationOptions as SummarizationOptions

if TYPE_CHECKING:  # the run machinery (asyncio) loads when a run uses the compactor, not here
    from agentkit_core import PluginManager
    from agentkit_core import RunContext
    from agentkit_core.plugin import Estimator
    from agentkit_core.plugin import Model

__all__ = [
    "HEADER",
    "INSTRUCTIONS",
    "SummarizationCompactor",
    "SummarizationOptions",
    "Summarizer",
]

#: The core's names this module shows, read from the fold module on first use (loading the
#: plugin, as every Agent() and ``agentkit plugins list`` do, does not import it):
#: ``INSTRUCTIONS``, the system message of the summary request when a model writes the
#: summary; ``HEADER``, the first line of the summary message, so the model reading it knows
#: what it is; ``Summarizer``, the type of ``summarizer=``.
_FROM_CORE = {
    "INSTRUCTIONS": "SUMMARY_INSTRUCTIONS",
    "HEADER": "SUMMARY_HEADER",
    "Summarizer": "Summarizer",
}


def __getattr__(name: str) -> Any:
    if name == "SummarizationOptions":
        from ._options import SummarizationOptions

        return SummarizationOptions
    core = _FROM_CORE.get(name)
    if core is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import agentkit_core.plugin

    value = globals()[name] = getattr(agentkit_core.plugin, core)
    return value


class SummarizationCompactor:
    """Over ``max_tokens``, keep the system message and the recent tail; summarize the rest.

    Stateless: it summarizes again on every request past its threshold. For a summary the
    run's transcript keeps (written once per fold), use ``Folding`` (``Kit(compaction=...)``),
    which shares this compactor's summary.

    The summary comes from ``summarizer=`` or, failing that, from a model: ``model=`` (a
    Model or model string) or else the run's own model, always called through the run's
    middleware chain (tracing, retry, metering: its cost lands on the run). ``keep_recent`` is
    the token budget of the tail kept verbatim (half of ``max_tokens`` unless given). When the
    summary cannot be had (the call raises, the summary is empty, cut short or no smaller than
    what it would replace) the transcript comes back whole and the ``compaction`` span says why.
    A model string is resolved on ``manager``, which it then requires (the lookup passes the
    one it ran on); a Model needs none.
    """

    def __init__(
        self,
        summarizer: Summarizer | None = None,
        *,
        model: Model | str | None = None,
        max_tokens: int = 12_000,
        keep_recent: int | None = None,
        instructions: str | None = None,
        estimate: Estimator | None = None,
        manager: PluginManager | None = None,
    ) -> None:
        if summarizer is not None and model is not None:
            raise ConfigError(
                "SummarizationCompactor got both summarizer= and model=; pass one (model= is "
                "the model that writes the summary, summarizer= writes it yourself)",
                source="SummarizationCompactor",
            )
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}", value=max_tokens)
        keep_recent = max(1, max_tokens // 2) if keep_recent is None else keep_recent
        if keep_recent < 1:
            raise ConfigError(
                f"keep_recent must be at least 1 token, got {keep_recent}", value=keep_recent
            )
        self.summarizer = summarizer
        if model is not None:
            model = resolve_model_option(model, manager=manager, owner="SummarizationCompactor")
        self.model = model
        self.max_tokens = max_tokens
        self.keep_recent = keep_recent
        if instructions is None:  # the core's, from the fold module, loaded with a compactor
            from agentkit_core.plugin import SUMMARY_INSTRUCTIONS

            instructions = SUMMARY_INSTRUCTIONS
        self.instructions = instructions
        self.estimate = estimate

    async def compact(self, messages: Sequence[Message], ctx: RunContext) -> Sequence[Message]:
        """The system message, one summary of the older middle, the recent tail."""
        from agentkit_core.plugin import (
            compaction_units,  # the units load with the first compaction, not the plugin
        )
        from agentkit_core.plugin import fold_cut  # and the fold's: the summary is the fold's
        from agentkit_core.plugin import keep_units
        from agentkit_core.plugin import newest_user
        from agentkit_core.plugin import within_budget
        from agentkit_core.plugin import write_summary

        units = compaction_units(messages, self.estimate)
        if within_budget(units, self.max_tokens):
            return messages
        head = 1 if units and units[0].kind == "system" else 0
        cut = fold_cut(messages, self.keep_recent, head=head, estimate=self.estimate)
        middle = [u for u in units[head:] if u.start < cut]
        tail = [u for u in units if u.start >= cut]
        question = newest_user(messages)
        pinned = [u for u in middle if question is not None and u.start <= question < u.end]
        if pinned:  # the question the run answers stays as asked, after the summary
            middle.remove(pinned[0])
            tail.insert(0, pinned[0])
        outer = current_span()
        with ctx.trace.span("compaction", compactor="summarization") as span:

            def skip(reason: str) -> Sequence[Message]:
                for s in (outer, span):
                    s.set("compaction_skipped", reason)
                return messages

            old = [m for u in middle for m in messages[u.start : u.end]]
            if not middle:
                return skip("nothing older than the recent tail to summarize")
            try:
                summary = await write_summary(
                    old,
                    ctx,
                    summarizer=self.summarizer,
                    model=self.model,
                    instructions=self.instructions,
                    estimate=self.estimate,
                    source="the summarization compactor",
                )
            except FoldError as exc:
                return skip(str(exc))
            span.set("compaction_summarized_messages", len(old))
            span.set("compaction_summarized_tokens", sum(u.tokens for u in middle))
            span.set("compaction_summary_tokens", (self.estimate or estimate_tokens)([summary]))
            return [*messages[:head], summary, *keep_units(messages, tail)]


@hookimpl
def agentkit_register_compactors(register: Register[CompactorFactory]) -> None:
    """Offer ``summarization``."""
    register(
        "summarization",
        SummarizationCompactor,
        settings=partial(__getattr__, "SummarizationOptions"),
    )
