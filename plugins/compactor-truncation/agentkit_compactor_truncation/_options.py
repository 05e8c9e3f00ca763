"""``TruncationOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import TypedDict

if TYPE_CHECKING:
    from agentkit_core.plugin import Estimator


class TruncationOptions(TypedDict, total=False):
    """The options of ``truncation`` (``Kit(compactor_options=...)``), checked at lookup."""

    #: The token budget of the transcript sent (at least 1; default 12000).
    max_tokens: int
    #: ``(messages) -> tokens``, in place of ``agentkit_core.estimate_tokens`` (code only).
    estimate: Estimator | None
