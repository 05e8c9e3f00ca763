"""A usage count a broken or hostile server sends that is no count (negative) is a
ProviderResponseError naming the field, never a usage that lifts a token or cost budget."""

from __future__ import annotations

import pytest
from agentkit_model_gemini import GeminiModel
from agentkit_model_gemini import usage_from_gemini
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.testing import WireServer


async def test_a_negative_count_on_the_wire_is_refused(server: WireServer) -> None:
    candidate = {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    usage = {"promptTokenCount": -1_000_000, "candidatesTokenCount": 2}
    server.answer({"candidates": [candidate], "usageMetadata": usage})
    model = GeminiModel("gemini-2.5-flash", base_url=server.url, api_key="test-key")
    with pytest.raises(ProviderResponseError, match="prompt_token_count is not a token count"):
        await model.request(ModelRequest((Message.user("hi"),)))


@given(st.integers(), st.integers(0, 10**6))
def test_a_count_is_taken_only_when_zero_or_more(prompt: int, output: int) -> None:
    meta = {"prompt_token_count": prompt, "candidates_token_count": output}
    try:
        usage = usage_from_gemini(meta)
    except ProviderResponseError:
        assert prompt < 0
        return
    assert (usage.input_tokens, usage.output_tokens) == (prompt, output)
