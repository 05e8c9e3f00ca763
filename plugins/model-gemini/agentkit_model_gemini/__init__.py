"""The ``gemini`` model provider: Google Gemini through the official google-genai SDK.

``"gemini:gemini-2.5-flash"`` gives ``GeminiModel("gemini-2.5-flash")``: the Gemini API with
``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``), or Vertex AI with ``vertexai=True``. The SDK is
imported on the first request, so listing plugins stays fast.
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

    from ._model import GeminiBlockedError as GeminiBlockedError
    from ._model import GeminiModel as GeminiModel
    from ._model import retry_after as retry_after
    from ._options import GeminiOptions as GeminiOptions
    from ._wire import IGNORED_SETTINGS as IGNORED_SETTINGS
    from ._wire import WIRE as WIRE
    from ._wire import messages_from_gemini as messages_from_gemini
    from ._wire import messages_to_gemini as messages_to_gemini
    from ._wire import settings_to_gemini as settings_to_gemini
    from ._wire import usage_from_gemini as usage_from_gemini

#: Public name -> the private module defining it, imported on first access (so loading the
#: plugin, as ``agentkit plugins list`` does, imports neither, nor the SDK).
_LAZY = {
    "GeminiBlockedError": "._model",
    "GeminiModel": "._model",
    "retry_after": "._model",
    "IGNORED_SETTINGS": "._wire",
    "WIRE": "._wire",
    "messages_from_gemini": "._wire",
    "messages_to_gemini": "._wire",
    "settings_to_gemini": "._wire",
    "usage_from_gemini": "._wire",
}

__all__ = [
    "IGNORED_SETTINGS",
    "WIRE",
    "GeminiBlockedError",
    "GeminiModel",
    "messages_from_gemini",
    "messages_to_gemini",
    "retry_after",
    "settings_to_gemini",
    "usage_from_gemini",
]


@hookimpl
def agentkit_register_models(register: Register[ModelFactory]) -> None:
    """Offer the ``gemini`` prefix."""
    register("gemini", _gemini_model, settings=partial(__getattr__, "GeminiOptions"))


def _gemini_model(model: str, **options: Any) -> GeminiModel:
    """``GeminiModel(model, **options)``, the model module imported on the first call."""
    from ._model import GeminiModel

    return GeminiModel(model, **options)


__getattr__ = lazy_attributes(__name__, {**_LAZY, "GeminiOptions": "._options"})
