"""GeminiModel runs the shared Model conformance suite against recorded wire answers.

Each scenario has a JSON recording (for ``request()``, ``generateContent``) and the SSE
recording of the same answer (for ``stream()``, ``streamGenerateContent?alt=sse``), served by
the local wire server of conftest.py to the real google-genai client.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentkit_model_gemini import GeminiModel

from agentkit_core.plugin import Model
from agentkit_core.testing import ModelConformance

RECORDED = {
    "text": ("plain.json", "plain.sse"),
    "tool_calls": ("parallel_tools.json", "parallel_tools.sse"),
    "structured": ("structured.json", "structured.sse"),
    "reasoning": ("thinking_answer.json", "thinking.sse"),
}


class TestGeminiModelConformance(ModelConformance):
    scenarios = ("text", "tool_calls", "structured", "error", "reasoning", "echoed_key")

    @pytest.fixture(autouse=True)
    def _wire(self, server: Any) -> None:
        self.server = server

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        if scenario == "error":
            self.server.json("error_400.json", status=400)
        elif scenario == "echoed_key":
            error = {"code": 400, "status": "INVALID_ARGUMENT", "message": self.echoed_key}
            self.server.answer({"error": error}, status=400)
            key = self.echoed_key
            return GeminiModel("gemini-2.5-flash", base_url=self.server.url, api_key=key)
        elif stream:
            self.server.sse(RECORDED[scenario][1])
        else:
            self.server.json(RECORDED[scenario][0])
        return GeminiModel("gemini-2.5-flash", base_url=self.server.url, api_key="test-key")
