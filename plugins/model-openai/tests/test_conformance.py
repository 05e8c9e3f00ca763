"""OpenAIModel runs the shared Model conformance suite against recorded wire answers.

Each scenario has a JSON recording (for ``request()``) and the SSE recording of the same
answer (for ``stream()``), served by the local wire server of conftest.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentkit_model_openai import OpenAIModel

from agentkit_core.plugin import Model
from agentkit_core.testing import ModelConformance

RECORDED = {
    "text": ("plain.json", "plain.sse"),
    "tool_calls": ("parallel_tools.json", "parallel_tools.sse"),
    "structured": ("structured.json", "structured.sse"),
}


class TestOpenAIModelConformance(ModelConformance):
    scenarios = ("text", "tool_calls", "structured", "error", "echoed_key")

    @pytest.fixture(autouse=True)
    def _wire(self, server: Any) -> None:
        self.server = server

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        if scenario == "error":
            self.server.json("error_400.json", status=400)
        elif scenario == "echoed_key":  # a proxy's page echoing the request's headers
            page = f"<html>401: Authorization: Bearer {self.echoed_key}</html>"
            self.server.raw(401, page.encode())
            return OpenAIModel("gpt-4o-mini", base_url=self.server.url, api_key=self.echoed_key)
        elif stream:
            self.server.sse(RECORDED[scenario][1])
        else:
            self.server.json(RECORDED[scenario][0])
        return OpenAIModel("gpt-4o-mini", base_url=self.server.url, api_key="sk-test")
