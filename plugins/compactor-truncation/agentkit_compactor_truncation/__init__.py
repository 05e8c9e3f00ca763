"""The ``truncation`` compactor: drop the oldest turns until the estimate fits a token budget."""

from __future__ import annotations

from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Estimator
from agentkit_core import Message
from agentkit_core import RunContext
from agentkit_core import compaction_units
from agentkit_core import hookimpl
from agentkit_core import keep_units
from agentkit_core import recent_units

__all__ = ["TruncationCompactor"]


class TruncationCompactor:
    """Keep the leading system message and the newest turns within ``max_tokens``.

    Tokens are estimated by ``agentkit_core.tokens`` (which counts tool-call arguments)
    unless ``estimate=`` is passed on purpose. The newest turn is kept even when it alone is
    over the budget, so the result is never empty; a transcript within the budget comes back
    unchanged.
    """

    def __init__(self, max_tokens: int = 12_000, *, estimate: Estimator | None = None) -> None:
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}", value=max_tokens)
        self.max_tokens = max_tokens
        self.estimate = estimate

    async def compact(self, messages: list[Message], ctx: RunContext) -> list[Message]:
        """The system message and the newest turns that fit the budget."""
        units = compaction_units(messages, self.estimate)
        total = sum(u.tokens for u in units)
        if total <= self.max_tokens:
            return messages
        head = units[:1] if units and units[0].kind == "system" else []
        room = self.max_tokens - sum(u.tokens for u in head)
        kept = recent_units(units, room, lambda u: u.tokens)
        return keep_units(messages, head + kept)


@hookimpl
def agentkit_register_compactors(register: Any) -> None:
    """Offer ``truncation``."""
    register("truncation", TruncationCompactor)
