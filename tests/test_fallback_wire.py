"""The fallback chain behind the real provider plugins, against real HTTP servers on 127.0.0.1.

Each provider is its own server playing the plugin's recorded wire bodies in a pattern: a 429
then an answer, a 529 from one provider while the other answers, a stream cut after its first
delta, an invalid request on every model.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentkit_model_anthropic import AnthropicModel
from agentkit_model_openai import OpenAIModel

from agentkit_core import Agent
from agentkit_core import FallbackModel
from agentkit_core import Hooks
from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import retry
from agentkit_core.testing import WireServer

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"


@pytest.fixture
def openai() -> Iterator[WireServer]:
    wire = WireServer(PLUGINS / "model-openai" / "tests" / "recordings", base_path="/v1")
    yield wire
    wire.close()


@pytest.fixture
def anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[WireServer]:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    wire = WireServer(PLUGINS / "model-anthropic" / "tests" / "recordings")
    yield wire
    wire.close()


def chain(anthropic: WireServer, openai: WireServer, attempts: int = 2) -> FallbackModel:
    claude = AnthropicModel("claude-sonnet-4-5", base_url=anthropic.url, api_key="k")
    gpt = OpenAIModel("gpt-4o-mini", base_url=openai.url, api_key="k")
    policy = retry(attempts, base_delay=0.01, max_delay=1.0, rng=random.Random(0))
    return FallbackModel([claude, gpt], retry=policy)


def ask() -> ModelRequest:
    return ModelRequest((Message.user("What is the capital of France?"),))


async def test_a_429_then_an_answer_stays_with_the_first_model(
    anthropic: WireServer, openai: WireServer
) -> None:
    anthropic.json("error_429.json", status=429, headers={"Retry-After": "0"})
    anthropic.json("plain.json")
    response = await chain(anthropic, openai).request(ask())
    assert response.answered_by == "anthropic:claude-sonnet-4-5"
    assert len(anthropic.received) == 2 and openai.received == []


async def test_a_529_from_one_provider_while_the_other_answers(
    anthropic: WireServer, openai: WireServer
) -> None:
    anthropic.json("error_529.json", status=529)
    anthropic.json("error_529.json", status=529)
    openai.json("plain.json")
    agent = Agent("x", chain(anthropic, openai), "", hooks=Hooks())
    result = await agent.run("What is the capital of France?")
    assert result.output == "The capital of France is Paris."
    assert len(anthropic.received) == 2 and len(openai.received) == 1
    assert list(result.usage_by_model) == ["openai:gpt-4o-mini"]


async def test_a_stream_cut_after_its_first_delta_does_not_fall_back(
    anthropic: WireServer, openai: WireServer
) -> None:
    anthropic.sse("overloaded_mid_stream.sse")
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError, match="529 mid-stream"):
        async for event in chain(anthropic, openai).stream(ask()):
            seen.append(event)
    assert seen and seen[0].kind == "text"  # the caller saw the start of an answer
    assert len(anthropic.received) == 1 and openai.received == []


async def test_a_stream_that_fails_before_any_delta_falls_back(
    anthropic: WireServer, openai: WireServer
) -> None:
    anthropic.json("error_529.json", status=529)
    openai.sse("plain.sse")
    events = [e async for e in chain(anthropic, openai, attempts=1).stream(ask())]
    assert events[-1].response is not None
    assert events[-1].response.answered_by == "openai:gpt-4o-mini"
    assert "".join(e.text for e in events if e.kind == "text") == "The capital of France is Paris."


async def test_an_invalid_request_is_not_sent_to_the_next_model(
    anthropic: WireServer, openai: WireServer
) -> None:
    anthropic.json("error_400.json", status=400)
    openai.json("error_400.json", status=400)
    with pytest.raises(ProviderError, match="HTTP 400") as info:
        await chain(anthropic, openai).request(ask())
    assert not info.value.retryable
    assert len(anthropic.received) == 1 and openai.received == []
