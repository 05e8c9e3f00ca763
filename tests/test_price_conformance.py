"""The price-source conformance suite passes a source that keeps its contract and fails each
kind of source that breaks it (a guess, a raise, a negative or shrinking cost)."""

from __future__ import annotations

from typing import ClassVar

import pytest

from agentkit_core import Usage
from agentkit_core.plugin import Price
from agentkit_core.plugin import Priced
from agentkit_core.testing import PriceSourceConformance

TABLE = {
    "acme:rocket-1": Price(3.0, 15.0, cache_read=0.3, cache_write=3.75),
    "acme:rocket-1-mini": Price(0.15, 0.6),
    "zeta:orbit": Price(1.0, 2.0, reasoning=4.0),
}


def table_source(model: str) -> Priced | None:
    """Exact names only: what a hand-kept table does."""
    return TABLE.get(model)


class TestTableConformance(PriceSourceConformance):
    known_models = tuple(TABLE)

    def make_source(self) -> object:  # type: ignore[override]
        return table_source


class Negative:
    def cost(self, usage: Usage) -> float:
        return -0.01


class Shrinking:
    def cost(self, usage: Usage) -> float:
        return 1.0 / (1 + usage.input_tokens + usage.output_tokens)


def guessing(model: str) -> Priced | None:
    return TABLE.get(model, TABLE["acme:rocket-1"])


def fragile(model: str) -> Priced | None:
    return TABLE.get(model.encode("ascii").decode())  # UnicodeEncodeError on a non-ASCII name


BROKEN = {
    "test_a_name_it_does_not_know_has_no_price": guessing,
    "test_no_name_makes_it_raise": fragile,
    "test_costs_are_dollars_that_grow_with_the_tokens": lambda m: Negative(),
    "test_the_same_name_gets_the_same_price": lambda m, n=iter(range(10**6)): Price(next(n), 1.0),
}


@pytest.mark.parametrize("test", sorted(BROKEN))
def test_the_suite_fails_a_source_that_breaks_its_contract(test: str) -> None:
    class Broken(PriceSourceConformance):
        known_models: ClassVar[tuple[str, ...]] = ("acme:rocket-1",)

        def make_source(self) -> object:  # type: ignore[override]
            return BROKEN[test]

    with pytest.raises(AssertionError):
        getattr(Broken(), test)()


def test_a_shrinking_cost_fails_the_suite() -> None:
    class Broken(PriceSourceConformance):
        known_models: ClassVar[tuple[str, ...]] = ("acme:rocket-1",)

        def make_source(self) -> object:  # type: ignore[override]
            return lambda model: Shrinking()

    with pytest.raises(AssertionError, match="costs less"):
        Broken().test_costs_are_dollars_that_grow_with_the_tokens()


def test_a_subclass_without_models_is_told_to_name_some() -> None:
    with pytest.raises(AssertionError, match="known_models"):
        PriceSourceConformance().test_each_known_model_has_a_price()
