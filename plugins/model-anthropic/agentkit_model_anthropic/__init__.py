"""The ``anthropic`` model provider: Claude through the Messages API, on the official SDK.

``"anthropic:claude-sonnet-4-5"`` gives ``AnthropicModel("claude-sonnet-4-5")``. The
``anthropic`` SDK is imported on the first request, so listing plugins stays fast.
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

    from ._cache import MAX_BREAKPOINTS as MAX_BREAKPOINTS
    from ._cache import place_breakpoints as place_breakpoints
    from ._model import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
    from ._model import AnthropicModel as AnthropicModel
    from ._model import provider_error as provider_error
    from ._options import AnthropicOptions as AnthropicOptions
    from ._wire import IGNORED_SETTINGS as IGNORED_SETTINGS
    from ._wire import STOP_REASONS as STOP_REASONS
    from ._wire import WIRE as WIRE
    from ._wire import message_from_anthropic as message_from_anthropic
    from ._wire import messages_from_anthropic as messages_from_anthropic
    from ._wire import messages_to_anthropic as messages_to_anthropic
    from ._wire import settings_to_anthropic as settings_to_anthropic
    from ._wire import system_to_anthropic as system_to_anthropic
    from ._wire import usage_from_anthropic as usage_from_anthropic

#: Public name -> the private module defining it, imported on first access (so loading the
#: plugin, as ``agentkit plugins list`` does, imports neither them nor the SDK).
_LAZY = {
    "MAX_BREAKPOINTS": "._cache",
    "place_breakpoints": "._cache",
    "DEFAULT_MAX_TOKENS": "._model",
    "AnthropicModel": "._model",
    "provider_error": "._model",
    "IGNORED_SETTINGS": "._wire",
    "STOP_REASONS": "._wire",
    "WIRE": "._wire",
    "message_from_anthropic": "._wire",
    "messages_from_anthropic": "._wire",
    "messages_to_anthropic": "._wire",
    "settings_to_anthropic": "._wire",
    "system_to_anthropic": "._wire",
    "usage_from_anthropic": "._wire",
}

__all__ = sorted(_LAZY)


@hookimpl
def agentkit_register_models(register: Register[ModelFactory]) -> None:
    """Offer the ``anthropic`` prefix."""
    register("anthropic", _anthropic_model, settings=partial(__getattr__, "AnthropicOptions"))


def _anthropic_model(model: str, **options: Any) -> AnthropicModel:
    """``AnthropicModel(model, **options)``, the model module imported on the first call."""
    from ._model import AnthropicModel

    return AnthropicModel(model, **options)


__getattr__ = lazy_attributes(__name__, {**_LAZY, "AnthropicOptions": "._options"})
