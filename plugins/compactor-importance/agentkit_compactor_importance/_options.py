"""The option types (``ImportanceOptions``, ``Filterer``), made when first read, not at load."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import TypedDict

from agentkit_core import Message

if TYPE_CHECKING:
    from agentkit_core import RunContext
    from agentkit_core.plugin import Estimator
    from agentkit_core.plugin import Model

#: ``async (turns, ctx) -> indices``: which of ``turns`` (0-based) must be kept. Each turn is
#: the messages of one unit: a message, or a tool call with all of its results.
Filterer = Callable[[list[list[Message]], "RunContext"], Awaitable[Sequence[int]]]


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
