"""agentkit-guard-redact: personal data and secrets redacted from requests and answers.

Registered as the guard ``"redact"``: ``Kit(guards=["redact"])``, with
``guard_options={"redact": {"kinds": ["email", "card"]}}`` to redact only some kinds. The
detectors are core's (``agentkit_core.plugin.PII_DETECTORS``), the ones the web guardrail redacts
tool output with. The guard itself (``_guard``) is imported on first use.
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

    from ._guard import RedactGuard
    from ._options import RedactOptions as RedactOptions

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


def make(**options: Any) -> RedactGuard:
    """The guard, built with ``options`` (see :class:`RedactGuard`)."""
    from ._guard import RedactGuard

    return RedactGuard(**options)


@hookimpl
def agentkit_register_guards(register: Register[GuardFactory]) -> None:
    """Offer the redaction guard as ``"redact"``."""
    register(GUARD, make, settings=partial(__getattr__, "RedactOptions"))


__getattr__ = lazy_attributes(__name__, {"RedactGuard": "._guard", "RedactOptions": "._options"})
