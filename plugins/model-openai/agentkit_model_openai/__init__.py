"""The ``openai`` model provider: OpenAI-compatible Chat Completions over httpx.

``"openai:gpt-4o-mini"`` gives ``OpenAIModel("gpt-4o-mini")``. The same client talks to vLLM,
llama.cpp's server, Ollama and LM Studio through ``OPENAI_BASE_URL``. httpx is imported on the
first request, so listing plugins stays fast.
"""

from __future__ import annotations

from typing import Any

from agentkit_core import hookimpl

from ._model import OpenAIModel
from ._model import retry_after
from ._wire import IGNORED_SETTINGS
from ._wire import WIRE
from ._wire import message_from_openai
from ._wire import message_to_openai
from ._wire import messages_from_openai
from ._wire import messages_to_openai
from ._wire import settings_to_openai
from ._wire import usage_from_openai

__all__ = [
    "IGNORED_SETTINGS",
    "WIRE",
    "OpenAIModel",
    "message_from_openai",
    "message_to_openai",
    "messages_from_openai",
    "messages_to_openai",
    "retry_after",
    "settings_to_openai",
    "usage_from_openai",
]


@hookimpl
def agentkit_register_models(register: Any) -> None:
    """Offer the ``openai`` prefix."""
    register("openai", OpenAIModel)
