"""Two tool_use blocks of one answer with one id are a ProviderResponseError naming the block:
their results and decisions go by id, so they could not be told apart."""

from __future__ import annotations

import pytest
from agentkit_model_anthropic import AnthropicModel
from agentkit_model_anthropic import messages_from_anthropic

from agentkit_core import Message
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.testing import WireServer

BLOCK = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}


async def test_two_tool_uses_with_one_id_are_refused(server: WireServer) -> None:
    server.answer(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [BLOCK, {**BLOCK, "input": {"rm": "-rf"}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    model = AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key="sk-test")
    with pytest.raises(ProviderResponseError, match=r"content\[1\]\.id 'toolu_1' repeats"):
        await model.request(ModelRequest((Message.user("hi"),)))


def test_distinct_ids_are_two_calls() -> None:
    turn = {"role": "assistant", "content": [BLOCK, {**BLOCK, "id": "toolu_2"}]}
    [message] = messages_from_anthropic(None, [turn], model="anthropic:claude-sonnet-4-5")
    assert [c.id for c in message.tool_calls] == ["toolu_1", "toolu_2"]
