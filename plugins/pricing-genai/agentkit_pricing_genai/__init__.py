"""agentkit prices from genai-prices: what a call to each known model costs.

Registers the price source ``"genai-prices"``. ``genai_prices`` is imported on the first
model priced, not when the plugin loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit_core import hookimpl

from ._source import GenaiPrices

if TYPE_CHECKING:
    from agentkit_core.plugin import PriceSource
    from agentkit_core.plugin import Register

__all__ = ["GenaiPrices"]


@hookimpl
def agentkit_register_prices(register: Register[PriceSource]) -> None:
    """Offer the genai-prices table."""
    register("genai-prices", GenaiPrices())
