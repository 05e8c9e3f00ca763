"""An API key never shows in an error (the shared suite's "echoed_key" scenario plays an HTTP
error quoting it); here the other ways a server can echo it, and the URL's password."""

from __future__ import annotations

import json
import traceback

import pytest
from agentkit_model_openai import OpenAIModel

from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core.plugin import ModelRequest
from agentkit_core.testing import WireServer

KEY = "sk-test-echoed-0123456789abcdef"
REQUEST = ModelRequest((Message.user("hi"),))
BODIES = {
    "html": f"<html><body>400 Bad Request. Authorization: Bearer {KEY}</body></html>".encode(),
    "json": json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}).encode(),
    "empty": b"",
}


def _shown(exc: BaseException) -> str:
    """Everything a log line or a traceback would show of ``exc``, its chain included."""
    return "".join(traceback.format_exception(exc)) + repr(exc) + repr(vars(exc))


async def test_an_echoed_key_is_masked_in_a_mid_stream_error(server: WireServer) -> None:
    error = {"error": {"message": f"upstream refused Bearer {KEY}"}}
    server.events(b"data: " + json.dumps(error).encode() + b"\n\n")
    model = OpenAIModel("gpt-4o", base_url=server.url, api_key=KEY)
    with pytest.raises(
        ProviderError, match=r"mid-stream: upstream refused Bearer \*\*\*"
    ) as caught:
        [e async for e in model.stream(REQUEST)]
    assert KEY not in _shown(caught.value)


async def test_an_echoed_key_is_masked_in_a_200_that_is_not_json(server: WireServer) -> None:
    server.raw(200, f"<html>proxy login for {KEY}</html>".encode())
    model = OpenAIModel("gpt-4o", base_url=server.url, api_key=KEY)
    with pytest.raises(ProviderError, match="is not JSON") as caught:
        await model.request(REQUEST)
    assert KEY not in _shown(caught.value)


def test_a_password_in_the_base_url_is_masked_in_messages_and_the_repr() -> None:
    model = OpenAIModel("gpt-4o", base_url="http://user:hunter2hunter2@127.0.0.1:9/v1", api_key="")
    assert "hunter2" not in repr(model)
    assert "hunter2" not in model.where
    assert "hunter2" in model.url  # the request still goes there, credentials and all
