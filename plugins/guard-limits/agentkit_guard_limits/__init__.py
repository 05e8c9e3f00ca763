"""agentkit-guard-limits: a maximum of input tokens per request and of characters per answer.

Registers two guards: ``"max-input"`` (``guard_options={"max-input": {"max_tokens": 8000}}``)
and ``"max-output"`` (``guard_options={"max-output": {"max_chars": 4000}}``). Each refuses
with the numbers: what was measured and the limit. The guards (``_guards``) are imported on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any
from typing import TypedDict

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from agentkit_core.plugin import GuardFactory
    from agentkit_core.plugin import Register

    from ._guards import MaxInput
    from ._guards import MaxOutput

__all__ = [
    "MaxInput",
    "MaxInputOptions",
    "MaxOutput",
    "MaxOutputOptions",
    "agentkit_register_guards",
    "max_input",
    "max_output",
]


def __getattr__(name: str) -> Any:
    if name not in ("MaxInput", "MaxOutput"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _guards

    return getattr(_guards, name)


class MaxInputOptions(TypedDict, total=False):
    """The options of ``max-input`` (``guard_options={"max-input": {...}}``), checked."""

    #: The most tokens a request may have, by agentkit's estimate (at least 1; default 100000).
    max_tokens: int


class MaxOutputOptions(TypedDict, total=False):
    """The options of ``max-output`` (``guard_options={"max-output": {...}}``), checked."""

    #: The most characters an answer may have (at least 1; default 20000).
    max_chars: int


def max_input(**options: Any) -> MaxInput:
    """The input limit, built with ``options`` (see :class:`MaxInput`)."""
    from ._guards import MaxInput

    return MaxInput(**options)


def max_output(**options: Any) -> MaxOutput:
    """The answer limit, built with ``options`` (see :class:`MaxOutput`)."""
    from ._guards import MaxOutput

    return MaxOutput(**options)


@hookimpl
def agentkit_register_guards(register: Register[GuardFactory]) -> None:
    """Offer ``"max-input"`` and ``"max-output"``, in that order."""
    register("max-input", max_input, settings=MaxInputOptions)
    register("max-output", max_output, settings=MaxOutputOptions)
