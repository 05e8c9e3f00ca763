"""The ``sliding-window`` compactor: the leading system message and the most recent turns."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from agentkit_core import ConfigError
from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    from agentkit_core import Message
    from agentkit_core import RunContext
    from agentkit_core.plugin import CompactorFactory
    from agentkit_core.plugin import Register

    from ._options import SlidingWindowOptions as SlidingWindowOptions

__all__ = ["SlidingWindowCompactor", "SlidingWindowOptions"]


class SlidingWindowCompactor:
    """Keep the leading system message and at most ``keep_recent`` of the latest messages.

    Counts messages, not tokens (use ``truncation`` for a token budget). The window never cuts
    a tool call from its results, so it may keep fewer than ``keep_recent``; the newest turn is
    kept even when it alone is longer. A transcript within the window comes back unchanged, and
    so does one with nothing a request may carry after its system message (only results that
    answer no call): there is no turn to keep, and the ``compaction()`` middleware's repair
    decides what of it can be sent.
    """

    def __init__(self, keep_recent: int = 10) -> None:
        if keep_recent < 1:
            raise ConfigError(
                f"keep_recent must be at least 1, got {keep_recent}", value=keep_recent
            )
        self.keep_recent = keep_recent

    async def compact(self, messages: Sequence[Message], ctx: RunContext) -> Sequence[Message]:
        """The system message and the most recent turns that fit the window."""
        from agentkit_core.plugin import (
            keep_units,  # the units load with the first compaction, not the plugin
        )
        from agentkit_core.plugin import newest_user
        from agentkit_core.plugin import recent_units
        from agentkit_core.plugin import units_from_end

        leading = 1 if messages and messages[0].role == "system" else 0
        if len(messages) - leading <= self.keep_recent:
            return messages
        units = units_from_end(messages, estimate=lambda ms: 0)
        kept = recent_units(units, self.keep_recent, lambda u: u.size, keep=newest_user(messages))
        if not kept:
            return messages
        return [*messages[:leading], *keep_units(messages, kept)]


@hookimpl
def agentkit_register_compactors(register: Register[CompactorFactory]) -> None:
    """Offer ``sliding-window``."""
    register(
        "sliding-window",
        SlidingWindowCompactor,
        settings=partial(__getattr__, "SlidingWindowOptions"),
    )


__getattr__ = lazy_attributes(__name__, {"SlidingWindowOptions": "._options"})
