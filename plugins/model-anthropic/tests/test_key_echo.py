"""An API key never shows in an error (the shared suite's "echoed_key" scenario plays an HTTP
error quoting it); here an error event mid-stream, and a cause without the key is kept."""

from __future__ import annotations

import json
import traceback

import pytest
from agentkit_model_anthropic import AnthropicModel

from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core.plugin import ModelRequest
from agentkit_core.testing import WireServer

KEY = "sk-ant-test-echoed-0123456789abcdef"
REQUEST = ModelRequest((Message.user("hi"),))
BODIES = {
    "html": f"<html><body>400 Bad Request. x-api-key: {KEY}</body></html>".encode(),
    "json": json.dumps(
        {"type": "error", "error": {"type": "authentication_error", "message": f"bad {KEY}"}}
    ).encode(),
}


def _shown(exc: BaseException) -> str:
    """Everything a log line or a traceback would show of ``exc``, its chain included."""
    return "".join(traceback.format_exception(exc)) + repr(exc) + repr(vars(exc))


async def test_an_error_without_the_key_keeps_its_cause(server: WireServer) -> None:
    server.raw(401, BODIES["json"].replace(KEY.encode(), b"the key"))
    model = AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key=KEY)
    with pytest.raises(ProviderError) as caught:
        await model.request(REQUEST)
    assert caught.value.__cause__ is not None  # the SDK's error, for the traceback


async def test_an_echoed_key_is_masked_in_an_error_event_mid_stream(server: WireServer) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": f"k={KEY}"}}
    server.events(b"event: error\ndata: " + json.dumps(error).encode() + b"\n\n")
    model = AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key=KEY)
    with pytest.raises(ProviderError) as caught:
        [e async for e in model.stream(REQUEST)]
    assert KEY not in _shown(caught.value)
