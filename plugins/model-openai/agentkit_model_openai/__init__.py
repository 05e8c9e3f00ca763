"""The ``openai`` model provider: OpenAI-compatible Chat Completions and OpenAI's Responses API.

``"openai:gpt-4o-mini"`` gives ``OpenAIModel("gpt-4o-mini")`` (Chat Completions);
``"openai-responses:o4-mini"`` gives ``OpenAIResponsesModel("o4-mini")`` (the Responses API).
The Chat Completions client talks to vLLM, llama.cpp's server, Ollama and LM Studio through
``OPENAI_BASE_URL``. httpx is imported on the first request, so listing plugins stays fast.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    from agentkit_core.plugin import ModelFactory
    from agentkit_core.plugin import Register

    from ._model import OpenAIModel as OpenAIModel
    from ._options import OpenAIOptions as OpenAIOptions
    from ._options import ResponsesOptions as ResponsesOptions
    from ._responses import OpenAIResponsesModel as OpenAIResponsesModel
    from ._responses_wire import RESPONSES_IGNORED_SETTINGS as RESPONSES_IGNORED_SETTINGS
    from ._responses_wire import messages_from_responses as messages_from_responses
    from ._responses_wire import messages_to_responses as messages_to_responses
    from ._responses_wire import settings_to_responses as settings_to_responses
    from ._responses_wire import usage_from_responses as usage_from_responses
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
    "OpenAIResponsesModel": "._responses",
    "RESPONSES_IGNORED_SETTINGS": "._responses_wire",
    "messages_from_responses": "._responses_wire",
    "messages_to_responses": "._responses_wire",
    "settings_to_responses": "._responses_wire",
    "usage_from_responses": "._responses_wire",
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
    "RESPONSES_IGNORED_SETTINGS",
    "WIRE",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "message_from_openai",
    "message_to_openai",
    "messages_from_openai",
    "messages_from_responses",
    "messages_to_openai",
    "messages_to_responses",
    "settings_to_openai",
    "settings_to_responses",
    "usage_from_openai",
    "usage_from_responses",
]


@hookimpl
def agentkit_register_models(register: Register[ModelFactory]) -> None:
    """Offer the ``openai`` (Chat Completions) and ``openai-responses`` prefixes."""
    register("openai", _openai_model, settings=partial(__getattr__, "OpenAIOptions"))
    register(
        "openai-responses", _responses_model, settings=partial(__getattr__, "ResponsesOptions")
    )


def _openai_model(model: str, **options: Any) -> OpenAIModel:
    """``OpenAIModel(model, **options)``, the model module imported on the first call."""
    from ._model import OpenAIModel

    return OpenAIModel(model, **options)


def _responses_model(model: str, **options: Any) -> OpenAIResponsesModel:
    """``OpenAIResponsesModel(model, **options)``, its module imported on the first call."""
    from ._responses import OpenAIResponsesModel

    return OpenAIResponsesModel(model, **options)


__getattr__ = lazy_attributes(
    __name__, {**_LAZY, "OpenAIOptions": "._options", "ResponsesOptions": "._options"}
)
