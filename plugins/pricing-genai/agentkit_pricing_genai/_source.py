"""The price source: a model name's price in the genai-prices table, looked up once."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core.plugin import Price

if TYPE_CHECKING:
    from agentkit_core import Usage
    from agentkit_core.plugin import Priced

#: agentkit's model prefixes whose provider genai-prices names otherwise.
PROVIDERS = {"gemini": "google"}

#: The genai-prices keys a flat :class:`Price` holds, by its field. A price with any other
#: key our usage counts (a per-request fee) or with tiers is computed by genai-prices itself.
_FLAT = {
    "input": "input_mtok",
    "output": "output_mtok",
    "cache_read": "cache_read_mtok",
    "cache_write": "cache_write_mtok",
}
_PER_REQUEST = "requests_kcount"


class Exact:
    """A price that is not flat (tiers by prompt length): genai-prices computes each cost."""

    def __init__(self, price: Any) -> None:
        self.price = price

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs, as genai-prices reckons it, in US dollars."""
        from genai_prices import Usage as GenaiUsage

        counted = GenaiUsage(
            input_tokens=usage.input_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
        )
        return float(self.price.calc_price(counted)["total_price"])


class GenaiPrices:
    """``source("openai:gpt-4o-mini")``: the model's price today, or None when unknown.

    The prefix names the provider (``gemini`` is genai-prices' ``google``); the rest is
    matched as genai-prices matches model names (``gpt-4o-mini-2024-07-18`` too). A model
    it does not know, or a provider it does not, has no price: never a neighbour's.
    """

    def __call__(self, model: str) -> Priced | None:
        from genai_prices import data_snapshot

        prefix, _, name = model.partition(":")
        provider = PROVIDERS.get(prefix, prefix)
        try:
            _, info = data_snapshot.get_snapshot().find_provider_model(name, None, provider, None)
        except LookupError:
            return None
        return priced(info.get_prices(datetime.now(tz=UTC)))


def priced(price: Any) -> Priced:
    """A genai-prices ``ModelPrice`` as a flat :class:`Price` when it is one, else exact."""
    values = {field: getattr(price, key, None) for field, key in _FLAT.items()}
    flat = all(v is None or isinstance(v, Decimal) for v in values.values())
    if not flat or values["input"] is None or values["output"] is None:
        return Exact(price)
    if getattr(price, _PER_REQUEST, None) is not None:
        return Exact(price)
    read, write = values["cache_read"], values["cache_write"]
    return Price(
        float(values["input"]),
        float(values["output"]),
        cache_read=None if read is None else float(read),
        cache_write=None if write is None else float(write),
    )
