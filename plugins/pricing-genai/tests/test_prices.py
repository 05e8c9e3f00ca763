"""genai-prices behind the price seam: cached and uncached tokens of each provider, to the cent."""

from __future__ import annotations

import sys
from pathlib import Path

import agentkit_pricing_genai
import genai_prices
import pytest
from agentkit_pricing_genai import GenaiPrices
from agentkit_pricing_genai._source import Exact

from agentkit_core import PluginManager
from agentkit_core import Usage
from agentkit_core.plugin import Price
from agentkit_core.plugin import cost_of
from agentkit_core.testing import PriceSourceConformance

# (model, usage, dollars): worked by hand from genai-prices 0.2.5's table, per million tokens.
FIXTURES = [
    # gpt-4o: 2.50 in, 1.25 cached in, 10 out
    ("openai:gpt-4o", Usage(1_000_000, 100_000), 3.50),
    ("openai:gpt-4o", Usage(1_000_000, 100_000, cache_read_tokens=400_000), 3.00),
    # gpt-4o-mini: 0.15 in, 0.075 cached in, 0.60 out (reasoning is billed as output)
    ("openai:gpt-4o-mini", Usage(20_000_000, 5_000_000, reasoning_tokens=1_000_000), 6.00),
    # claude-3-5-haiku: 0.80 in, 0.08 cache read, 1.00 cache write, 4 out
    ("anthropic:claude-3-5-haiku-latest", Usage(2_000_000, 500_000), 3.60),
    (
        "anthropic:claude-3-5-haiku-latest",
        Usage(2_000_000, 500_000, cache_read_tokens=1_000_000, cache_write_tokens=500_000),
        2.98,
    ),
    # claude-sonnet-4-5 (tiered past 200k prompt tokens): 3 in, 0.30 read, 3.75 write, 15 out
    ("anthropic:claude-sonnet-4-5", Usage(100_000, 10_000), 0.45),
    ("anthropic:claude-sonnet-4-5", Usage(100_000, 10_000, cache_read_tokens=50_000), 0.32),
    # gemini-2.0-flash: 0.10 in, 0.025 cached in, 0.40 out
    ("gemini:gemini-2.0-flash", Usage(10_000_000, 1_000_000), 1.40),
    ("gemini:gemini-2.0-flash", Usage(10_000_000, 1_000_000, cache_read_tokens=8_000_000), 0.80),
]


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_pricing_genai, name="genai-prices")
    return pm


@pytest.mark.parametrize(("model", "usage", "dollars"), FIXTURES)
def test_a_known_usage_costs_the_tables_figure_to_the_cent(
    model: str, usage: Usage, dollars: float
) -> None:
    cost = cost_of(usage, model, manager=manager())
    assert cost is not None and round(cost, 2) == dollars
    provider, _, name = model.partition(":")
    table = genai_prices.calc_price(
        genai_prices.Usage(
            input_tokens=usage.input_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
        ),
        name,
        provider_id={"gemini": "google"}.get(provider, provider),
    )
    assert round(cost, 2) == round(float(table.total_price), 2)


def test_flat_prices_are_flat_and_tiered_ones_are_left_to_the_table() -> None:
    source = GenaiPrices()
    assert source("openai:gpt-4o") == Price(2.5, 10.0, cache_read=1.25)
    assert isinstance(source("anthropic:claude-sonnet-4-5"), Exact)


def test_a_model_or_provider_the_table_does_not_know_has_no_price() -> None:
    pm = manager()
    assert cost_of(Usage(10, 10), "openai:no-such-model-x", manager=pm) is None
    assert cost_of(Usage(10, 10), "nowhere:gpt-4o", manager=pm) is None
    assert cost_of(Usage(10, 10), "test", manager=pm) is None


def test_the_config_overrides_the_table(tmp_path: Path) -> None:
    config = tmp_path / "agentkit.toml"
    config.write_text('[prices."openai:gpt-4o"]\ninput = 1.0\noutput = 2.0\n', encoding="utf-8")
    pm = PluginManager(entry_points=False, config=config)
    pm.register(agentkit_pricing_genai, name="genai-prices")
    assert cost_of(Usage(1_000_000, 1_000_000), "openai:gpt-4o", manager=pm) == 3.0
    assert cost_of(Usage(1_000_000, 0), "openai:gpt-4o-mini", manager=pm) == 0.15


def test_the_table_is_imported_on_the_first_model_priced_not_at_load() -> None:
    import subprocess

    code = (
        "import sys, agentkit_pricing_genai\n"
        "from agentkit_core import PluginManager\n"
        "pm = PluginManager(entry_points=False)\n"
        "pm.register(agentkit_pricing_genai, name='g')\n"
        "pm.load()\n"
        "assert 'genai_prices' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


class TestGenaiPricesConformance(PriceSourceConformance):
    known_models = (
        "openai:gpt-4o",
        "openai:gpt-4o-mini-2024-07-18",
        "anthropic:claude-sonnet-4-5",  # tiered: priced by genai-prices itself
        "gemini:gemini-2.0-flash",
    )

    def make_source(self) -> GenaiPrices:
        return GenaiPrices()
