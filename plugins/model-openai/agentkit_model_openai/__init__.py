"""The ``openai`` model provider: OpenAI-compatible Chat Completions over httpx.

``"openai:gpt-4o-mini"`` gives ``OpenAIModel("gpt-4o-mini")``. The same client talks to vLLM,
llama.cpp's server, Ollama and LM Studio through ``OPENAI_BASE_URL``. httpx is imported on the
first request, so listing plugins stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core import lazy_attributes

if TYPE_CHECKING:
    from ._http import retry_after as retry_after
    from ._model import OpenAIModel as OpenAIModel
    from ._wire import IGNORED_SETTINGS as IGNORED_SETTINGS
    from ._wire import WIRE as WIRE
    from ._wire import message_from_openai as message_from_openai
    from ._wire import message_to_openai as message_to_openai
    from ._wire import messages_from_openai as messages_from_openai
    from ._wire import messages_to_openai as messages_to_openai
    from ._wire import settings_to_openai as settings_to_openai
    from ._wire import usage_from_openai as usage_from_openai

#: Public name -> the private module defining it, imported on first access (so loading the
#: plugin, as ``agentkit plugins list`` does, imports neither).
_LAZY = {
    "OpenAIModel": "._model",
    "retry_after": "._http",
    "IGNORED_SETTINGS": "._wire",
    "WIRE": "._wire",
    "message_from_openai": "._wire",
    "message_to_openai": "._wire",
    "messages_from_openai": "._wire",
    "messages_to_openai": "._wire",
    "settings_to_openai": "._wire",
    "usage_from_openai": "._wire",
}

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
    register("openai", _openai_model)


def _openai_model(model: str, **options: Any) -> OpenAIModel:
    """``OpenAIModel(model, **options)``, the model module imported on the first call."""
    from ._model import OpenAIModel

    return OpenAIModel(model, **options)


__getattr__ = lazy_attributes(__name__, _LAZY)
