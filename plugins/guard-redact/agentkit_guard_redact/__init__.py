"""agentkit-guard-redact: personal data and secrets redacted from requests and answers.

Registered as the guard ``"redact"``: ``Kit(guards=["redact"])``, with
``guard_options={"redact": {"kinds": ["email", "card"]}}`` to redact only some kinds. The
detectors are core's (``agentkit_core.plugin.PII_DETECTORS``), the ones the web guardrail redacts
tool output with. The guard itself (``_guard``) is imported on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import TypedDict

from agentkit_core import hookimpl

if TYPE_CHECKING:
    from agentkit_core.plugin import GuardFactory
    from agentkit_core.plugin import Register

    from ._guard import RedactGuard

__all__ = [
    "AGENTKIT_PRIORITY",
    "GUARD",
    "RedactGuard",
    "RedactOptions",
    "agentkit_register_guards",
    "make",
]

#: The name the guard is registered under (``Kit(guards=["redact"])``).
GUARD = "redact"

#: Ahead of the guards that refuse (limits, denylists: priority 0), so they judge the text as it
#: is sent, with its secrets already replaced (see docs/ordering.md).
AGENTKIT_PRIORITY = 10


def __getattr__(name: str) -> Any:
    if name != "RedactGuard":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._guard import RedactGuard

    return RedactGuard


class RedactOptions(TypedDict, total=False):
    """The options of ``redact`` (``guard_options={"redact": {...}}``), checked at lookup."""

    #: The detectors applied, in this order (default: all of ``agentkit_core.PII_DETECTORS``).
    kinds: Sequence[str] | None
    #: Whether requests are redacted (default true).
    input: bool
    #: Whether answers are redacted (default true).
    output: bool
    #: How many redacted texts are remembered (default 1024).
    cache: int


def make(**options: Any) -> RedactGuard:
    """The guard, built with ``options`` (see :class:`RedactGuard`)."""
    from ._guard import RedactGuard

    return RedactGuard(**options)


@hookimpl
def agentkit_register_guards(register: Register[GuardFactory]) -> None:
    """Offer the redaction guard as ``"redact"``."""
    register(GUARD, make, settings=RedactOptions)
