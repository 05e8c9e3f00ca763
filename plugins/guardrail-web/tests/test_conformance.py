"""WebGuardrail passes the Guardrail conformance suite, with and without an allow list."""

from __future__ import annotations

from agentkit_guardrail_web import WebGuardrail

from agentkit_core.plugin import Guardrail
from agentkit_core.testing import GuardrailConformance


class TestWebGuardrail(GuardrailConformance):
    def make_guardrail(self) -> Guardrail:
        return WebGuardrail()


class TestWebGuardrailWithAllowList(GuardrailConformance):
    allowed_url = "https://docs.python.org/3/"
    refused_urls = (*GuardrailConformance.refused_urls, "https://example.com/")

    def make_guardrail(self) -> Guardrail:
        return WebGuardrail(egress_allow=["python.org"], redact_tool_output=True)
