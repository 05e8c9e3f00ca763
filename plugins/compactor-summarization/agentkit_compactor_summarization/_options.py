"""``SummarizationOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import TypedDict

if TYPE_CHECKING:
    from agentkit_core.plugin import Estimator
    from agentkit_core.plugin import Model
    from agentkit_core.plugin import Summarizer


class SummarizationOptions(TypedDict, total=False):
    """The options of ``summarization`` (``Kit(compactor_options=...)``), checked at lookup."""

    #: Writes the summary itself, instead of a model (code only; not with ``model``).
    summarizer: Summarizer | None
    #: The model that writes the summary: a Model (code only) or a model string.
    model: Model | str | None
    #: The token budget past which the middle is summarized (at least 1; default 12000).
    max_tokens: int
    #: The token budget of the tail kept verbatim (default: half of ``max_tokens``).
    keep_recent: int | None
    #: The system message of the summary request (default :data:`INSTRUCTIONS`).
    instructions: str
    #: ``(messages) -> tokens``, in place of ``agentkit_core.estimate_tokens`` (code only).
    estimate: Estimator | None
