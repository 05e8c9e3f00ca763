"""agentkit-guard-limits: a maximum of input tokens per request and of characters per answer.

Registers two guards: ``"max-input"`` (``guard_options={"max-input": {"max_tokens": 8000}}``)
and ``"max-output"`` (``guard_options={"max-output": {"max_chars": 4000}}``). Each refuses
with the numbers: what was measured and the limit. The guards (``_guards``) are imported on
first use.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    from agentkit_core.plugin import GuardFactory
    from agentkit_core.plugin import Register

    from ._guards import MaxInput
    from ._guards import MaxOutput
    from ._options import MaxInputOptions as MaxInputOptions
    from ._options import MaxOutputOptions as MaxOutputOptions

__all__ = [
    "MaxInput",
    "MaxInputOptions",
    "MaxOutput",
    "MaxOutputOptions",
    "agentkit_register_guards",
    "max_input",
    "max_output",
]


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
    register("max-input", max_input, settings=partial(__getattr__, "MaxInputOptions"))
    register("max-output", max_output, settings=partial(__getattr__, "MaxOutputOptions"))


__getattr__ = lazy_attributes(
    __name__,
    {
        "MaxInput": "._guards",
        "MaxOutput": "._guards",
        "MaxInputOptions": "._options",
        "MaxOutputOptions": "._options",
    },
)
