"""AnthropicModel runs the shared Model conformance suite against recorded wire answers.

Each scenario has a JSON recording (for ``request()``) and the SSE recording of the same
answer (for ``stream()``), served by the local wire server of conftest.py to the real SDK.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentkit_model_anthropic import AnthropicModel

from agentkit_core.plugin import Model
from agentkit_core.testing import ModelConformance

RECORDED = {
    "text": ("plain.json", "plain.sse"),
    "tool_calls": ("parallel_tools.json", "parallel_tools.sse"),
    "structured": ("structured.json", "structured.sse"),
    "reasoning": ("thinking_answer.json", "thinking_answer.sse"),
}


class TestAnthropicModelConformance(ModelConformance):
    scenarios = ("text", "tool_calls", "structured", "error", "reasoning", "echoed_key")

    @pytest.fixture(autouse=True)
    def _wire(self, server: Any) -> None:
        self.server = server

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        if scenario == "error":
            self.server.json("error_400.json", status=400)
        elif scenario == "echoed_key":
            error = {"type": "authentication_error", "message": f"bad key {self.echoed_key}"}
            self.server.answer({"type": "error", "error": error}, status=401)
            key = self.echoed_key
            return AnthropicModel("claude-sonnet-4-5", base_url=self.server.url, api_key=key)
        elif stream:
            self.server.sse(RECORDED[scenario][1])
        else:
            self.server.json(RECORDED[scenario][0])
        thinking = 2048 if scenario == "reasoning" else None
        return AnthropicModel(
            "claude-sonnet-4-5", base_url=self.server.url, api_key="sk-test", thinking=thinking
        )


class TestAnthropicModelConformanceByToolUse(TestAnthropicModelConformance):
    """Structured output by a forced tool call, for models without native JSON Schema output."""

    scenarios = ("text", "structured")

    async def make_model(self, scenario: str, *, stream: bool) -> Model:
        if scenario == "structured":
            self.server.sse("structured_tool.sse") if stream else self.server.json(
                "structured_tool.json"
            )
            return AnthropicModel(
                "claude-3-5-haiku", base_url=self.server.url, api_key="k", structured_output="tool"
            )
        return await super().make_model(scenario, stream=stream)
