"""``TruncationOptions``: the options this plugin declares (``settings=``).

Made when the options are first read, not when the plugin loads: a first run loads every
installed plugin, and making a ``TypedDict`` costs ~0.8 M instructions (its string hints
compiled one by one), more than loading a light entry module.
"""

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
