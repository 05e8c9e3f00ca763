"""Redacting e-mail addresses and phone numbers in tool output.

The detectors are core's (``agentkit_core.plugin.PII_DETECTORS``), shared with the redaction guard,
so a shape is recognised the same way wherever agentkit redacts; their module docstring says what
is and is not taken for a phone number.
"""

from __future__ import annotations

from agentkit_core.plugin import PII_DETECTORS
from agentkit_core.plugin import redact_pii

#: What tool output is redacted for: e-mail addresses, then phone numbers.
TOOL_OUTPUT_DETECTORS = (PII_DETECTORS["email"], PII_DETECTORS["phone"])


def redact(text: str) -> str:
    """``text`` with e-mail addresses and phone numbers replaced by ``[redacted ...]``."""
    return redact_pii(text, TOOL_OUTPUT_DETECTORS).text
