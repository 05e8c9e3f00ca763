"""agentkit prices from genai-prices: what a call to each known model costs.

Registers the price source ``"genai-prices"``. Loading the plugin (as ``agentkit plugins
list`` does) imports none of its modules; ``genai_prices`` is imported on the first model
priced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    from agentkit_core.plugin import Priced
    from agentkit_core.plugin import PriceSource
    from agentkit_core.plugin import Register

    from ._source import GenaiPrices as GenaiPrices

__all__ = ["GenaiPrices", "agentkit_register_prices"]


def _genai_prices(model: str) -> Priced | None:
    """The model's price from the genai-prices table (its module imported on first use)."""
    from ._source import GenaiPrices

    return GenaiPrices()(model)


@hookimpl
def agentkit_register_prices(register: Register[PriceSource]) -> None:
    """Offer the genai-prices table."""
    register("genai-prices", _genai_prices)


__getattr__ = lazy_attributes(__name__, {"GenaiPrices": "._source"})
