"""The ``summarization`` compactor: replace the older middle with one summary message."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from agentkit_core import SUMMARY
from agentkit_core import BudgetExceeded
from agentkit_core import ConfigError
from agentkit_core import Estimator
from agentkit_core import Message
from agentkit_core import Model
from agentkit_core import ModelRequest
from agentkit_core import PluginManager
from agentkit_core import RunContext
from agentkit_core import compaction_units
from agentkit_core import current_span
from agentkit_core import estimate_message
from agentkit_core import hookimpl
from agentkit_core import keep_units
from agentkit_core import recent_units
from agentkit_core import resolve_model

__all__ = ["INSTRUCTIONS", "SummarizationCompactor", "Summarizer"]

#: ``async (messages, ctx) -> summary text``: writes the summary of the older middle.
Summarizer = Callable[[list[Message], RunContext], Awaitable[str]]

#: The system message of the summary request when a model writes the summary.
INSTRUCTIONS = (
    "You compress conversations. Summarize the transcript you are given so that an assistant "
    "can carry on without it: keep facts, decisions, open questions, names, numbers and what "
    "each tool returned. Answer with the summary only."
)

#: First line of the summary message, so the model reading it knows what it is.
HEADER = "Summary of the earlier conversation:"


class SummarizationCompactor:
    """Over ``max_tokens``, keep the system message and the recent tail; summarize the rest.

    The summary comes from ``summarizer=`` or, failing that, from a model: ``model=`` (a
    Model or model string) or else the run's own model, always called through the run's
    middleware chain (tracing, retry, metering: its cost lands on the run). ``keep_recent`` is
    the token budget of the tail kept verbatim (half of ``max_tokens`` unless given). When the
    summary cannot be had (the call raises, the summary is empty or no smaller than what it
    would replace) the transcript comes back whole and the ``compaction`` span says why.
    A model string is resolved on ``manager`` (the lookup passes the one it ran on; default:
    the process-wide one).
    """

    def __init__(
        self,
        summarizer: Summarizer | None = None,
        *,
        model: Model | str | None = None,
        max_tokens: int = 12_000,
        keep_recent: int | None = None,
        instructions: str = INSTRUCTIONS,
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
        self.model = None if model is None else resolve_model(model, manager=manager)
        self.max_tokens = max_tokens
        self.keep_recent = keep_recent
        self.instructions = instructions
        self.estimate = estimate

    async def compact(self, messages: list[Message], ctx: RunContext) -> list[Message]:
        """The system message, one summary of the older middle, the recent tail."""
        units = compaction_units(messages, self.estimate)
        if sum(u.tokens for u in units) <= self.max_tokens:
            return messages
        head = units[:1] if units and units[0].kind == "system" else []
        tail = recent_units(reversed(units), self.keep_recent, lambda u: u.tokens)
        cut = tail[0].start if tail else len(messages)
        middle = [u for u in units[len(head) :] if u.start < cut]
        outer = current_span()
        with ctx.trace.span("compaction", compactor="summarization") as span:

            def skip(reason: str) -> list[Message]:
                for s in (outer, span):
                    s.set("compaction_skipped", reason)
                return messages

            if not middle:
                return skip("nothing older than the recent tail to summarize")
            old = messages[middle[0].start : cut]
            write = self.summarizer or self._model_summarizer(ctx)
            try:
                text = (await write(old, ctx)).strip()
            except BudgetExceeded:
                raise
            except Exception as exc:
                return skip(f"the summarizer failed: {type(exc).__name__}: {exc}")
            if not text:
                return skip("the summarizer returned an empty summary")
            summary = Message(
                "user", f"{HEADER}\n{text}", metadata={"compaction": SUMMARY, "replaces": len(old)}
            )
            replaced = sum(u.tokens for u in middle)
            cost = self._cost(summary)
            if cost >= replaced:
                return skip(
                    f"the summary ({cost} tokens) is no smaller than the {len(old)} messages "
                    f"it would replace ({replaced} tokens)"
                )
            span.set("compaction_summarized_messages", len(old))
            span.set("compaction_summarized_tokens", replaced)
            span.set("compaction_summary_tokens", cost)
            return [*keep_units(messages, head), summary, *keep_units(messages, tail)]

    def _cost(self, message: Message) -> int:
        return self.estimate([message]) if self.estimate is not None else estimate_message(message)

    def _model_summarizer(self, ctx: RunContext) -> Summarizer:
        invoker = ctx.invoker_for(
            self.model, source="the summarization compactor", hint="pass model= or summarizer="
        )

        async def write(old: list[Message], ctx: RunContext) -> str:
            request = ModelRequest(
                (Message.system(self.instructions), Message.user(_render(old))),
                ctx=ctx,
                metadata={"compaction": "summarization"},
            )
            return (await invoker.chat(request)).message.text

        return write


def _render(messages: list[Message]) -> str:
    """The transcript as plain text for the summary request: one block per message."""
    blocks = []
    for m in messages:
        who = f"tool {m.name or ''} result ({m.tool_call_id})" if m.role == "tool" else m.role
        lines = [f"{who}: {m.text}"]
        lines.extend(f"  calls {c.name}({c.arguments}) as {c.id}" for c in m.tool_calls)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


@hookimpl
def agentkit_register_compactors(register: Any) -> None:
    """Offer ``summarization``."""
    register("summarization", SummarizationCompactor)
