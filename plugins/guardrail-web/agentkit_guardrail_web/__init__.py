"""agentkit-guardrail-web: SSRF-safe egress, a pinned fetching client, redaction and framing.

``WebGuardrail`` is registered as the guardrail ``"web"``, with its settings
(:class:`WebSettings`: ``[guardrail.web]`` in the configuration file, ``AGENTKIT_WEB_*`` in the
environment); installing the plugin also makes it take part in the before/after tool-call hooks
(see ``_hooks``). ``SafeFetcher`` needs httpx and is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core.plugin import lazy_attributes

from ._hooks import agentkit_after_tool_call
from ._hooks import agentkit_before_tool_call
from ._hooks import agentkit_register_guardrails

if TYPE_CHECKING:
    from ._fetch import SafeFetcher as SafeFetcher
    from ._framing import scan_injection as scan_injection
    from ._guardrail import WebGuardrail as WebGuardrail
    from ._resolve import ResolvingURLCheck as ResolvingURLCheck
    from ._resolve import resolving_url_check as resolving_url_check
    from ._resolve import system_resolver as system_resolver
    from ._settings import WebSettings as WebSettings

#: Public name -> the private module defining it, imported on first access (so loading the
#: plugin, as ``agentkit plugins list`` does, imports none of them; ``SafeFetcher`` needs httpx).
_LAZY = {
    "SafeFetcher": "._fetch",
    "scan_injection": "._framing",
    "ResolvingURLCheck": "._resolve",
    "WebGuardrail": "._guardrail",
    "resolving_url_check": "._resolve",
    "system_resolver": "._resolve",
    "WebSettings": "._settings",
}

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


__getattr__ = lazy_attributes(__name__, _LAZY)
