"""OpenAIResponsesModel runs the shared Model conformance suite against recorded wire answers.

Each scenario has a JSON recording (for ``request()``) and the SSE recording of the same answer
(for ``stream()``), written from the Responses API reference and served by conftest.py's server.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentkit_model_openai import OpenAIResponsesModel

from agentkit_core.plugin import Model
from agentkit_core.testing import ModelConformance

RECORDED = {
    "text": "responses_plain",
    "tool_calls": "responses_parallel_tools",
    "structured": "responses_structured",
    "reasoning": "responses_reasoning_summary",
}


class TestOpenAIResponsesModelConformance(ModelConformance):
    scenarios = ("text", "tool_calls", "structured", "error", "reasoning", "echoed_key")

    @pytest.fixture(autouse=True)
    def _wire(self, server: Any) -> None:
        self.server = server

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        if scenario == "error":
            self.server.json("error_400.json", status=400)
        elif scenario == "echoed_key":
            error = {"error": {"message": f"Incorrect API key provided: {self.echoed_key}"}}
            self.server.answer(error, status=401)
            key = self.echoed_key
            return OpenAIResponsesModel("gpt-4.1-mini", base_url=self.server.url, api_key=key)
        elif stream:
            self.server.sse(RECORDED[scenario] + ".sse")
        else:
            self.server.json(RECORDED[scenario] + ".json")
        return OpenAIResponsesModel("gpt-4.1-mini", base_url=self.server.url, api_key="sk-test")
