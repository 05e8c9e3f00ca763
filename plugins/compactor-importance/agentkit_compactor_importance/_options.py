"""``ImportanceOptions``: the options this plugin declares (``settings=``).

Made when the options are first read, not when the plugin loads: a first run loads every
installed plugin, and making a ``TypedDict`` costs ~0.8 M instructions (its string hints
compiled one by one), more than loading a light entry module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import TypedDict

if TYPE_CHECKING:
    from . import Filterer
if TYPE_CHECKING:  # the run machinery (asyncio) loads when a run uses the compactor, not here
    from agentkit_core.plugin import Estimator
    from agentkit_core.plugin import Model


class ImportanceOptions(TypedDict, total=False):
    """The options of ``importance`` (``Kit(compactor_options=...)``), checked at lookup."""

    #: Chooses the turns to keep itself, instead of a model (code only; not with ``model``).
    filterer: Filterer | None
    #: The model that chooses: a Model (code only) or a model string.
    model: Model | str | None
    #: The token budget past which turns are filtered (at least 1; default 12000).
    max_tokens: int
    #: The system message of the filtering request (default :data:`INSTRUCTIONS`).
    instructions: str
    #: ``(messages) -> tokens``, in place of ``agentkit_core.estimate_tokens`` (code only).
    estimate: Estimator | None
