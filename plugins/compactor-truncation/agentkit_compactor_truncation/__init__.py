"""The ``truncation`` compactor: drop the oldest turns until the estimate fits a token budget."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from agentkit_core import ConfigError
from agentkit_core import hookimpl
from agentkit_core.plugin import estimate_tokens
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    from agentkit_core import Message
    from agentkit_core import RunContext
    from agentkit_core.plugin import CompactorFactory
    from agentkit_core.plugin import Estimator
    from agentkit_core.plugin import Register

    from ._options import TruncationOptions as TruncationOptions

__all__ = ["TruncationCompactor", "TruncationOptions"]


class TruncationCompactor:
    """Keep the leading system message and the newest turns within ``max_tokens``.

    Tokens are estimated by ``agentkit_core.plugin.estimate_tokens`` (which counts tool-call
    arguments) unless ``estimate=`` is passed on purpose. The newest turn is kept even when it alone
    is over the budget, so the result is never empty; a transcript within the budget comes back
    unchanged.
    """

    def __init__(self, max_tokens: int = 12_000, *, estimate: Estimator | None = None) -> None:
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}", value=max_tokens)
        self.max_tokens = max_tokens
        self.estimate = estimate

    async def compact(self, messages: Sequence[Message], ctx: RunContext) -> Sequence[Message]:
        """The system message and the newest turns that fit the budget."""
        from agentkit_core.plugin import (
            keep_units,  # the units load with the first compaction, not the plugin
        )
        from agentkit_core.plugin import newest_user
        from agentkit_core.plugin import recent_units
        from agentkit_core.plugin import units_from_end
        from agentkit_core.plugin import within_budget

        if within_budget(units_from_end(messages, self.estimate), self.max_tokens):
            return messages
        lead = messages[:1] if messages[0].role == "system" else []
        room = self.max_tokens - (self.estimate or estimate_tokens)(lead)
        kept = recent_units(
            units_from_end(messages, self.estimate),
            room,
            lambda u: u.tokens,
            keep=newest_user(messages),  # the question, even when the work since fills the room
        )
        return [*lead, *keep_units(messages, kept)]


@hookimpl
def agentkit_register_compactors(register: Register[CompactorFactory]) -> None:
    """Offer ``truncation``."""
    register("truncation", TruncationCompactor, settings=partial(__getattr__, "TruncationOptions"))


__getattr__ = lazy_attributes(__name__, {"TruncationOptions": "._options"})
