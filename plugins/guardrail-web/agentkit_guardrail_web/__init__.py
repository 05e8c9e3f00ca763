"""agentkit-guardrail-web: SSRF-safe egress, a pinned fetching client, redaction and framing.

``WebGuardrail`` is registered as the guardrail ``"web"``, with its settings
(:class:`WebSettings`: ``[guardrail.web]`` in the configuration file, ``AGENTKIT_WEB_*`` in the
environment); installing the plugin also makes it take part in the before/after tool-call hooks
(see ``_hooks``). ``SafeFetcher`` needs httpx and is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from ._framing import scan_injection
from ._guardrail import ResolvingURLCheck
from ._guardrail import WebGuardrail
from ._guardrail import WebSettings
from ._guardrail import resolving_url_check
from ._guardrail import system_resolver
from ._hooks import agentkit_after_tool_call
from ._hooks import agentkit_before_tool_call
from ._hooks import agentkit_register_guardrails

if TYPE_CHECKING:
    from ._fetch import SafeFetcher

__all__ = [
    "ResolvingURLCheck",
    "SafeFetcher",
    "WebGuardrail",
    "WebSettings",
    "agentkit_after_tool_call",
    "agentkit_before_tool_call",
    "agentkit_register_guardrails",
    "resolving_url_check",
    "scan_injection",
    "system_resolver",
]


def __getattr__(name: str) -> Any:
    if name == "SafeFetcher":
        from ._fetch import SafeFetcher

        return SafeFetcher
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
