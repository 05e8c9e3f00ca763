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

__all__ = ["OpenAIModel", "retry_after"]


@hookimpl
def agentkit_register_models(register: Any) -> None:
    """Offer the ``openai`` prefix."""
    register("openai", OpenAIModel)
