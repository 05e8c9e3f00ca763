"""The price-source conformance suite: what every ``agentkit_register_prices`` source must do.

Subclass it in a test module with a name starting ``Test``, give it ``make_source`` and name
some models it knows::

    class TestMyPrices(PriceSourceConformance):
        known_models = ("acme:rocket-1", "acme:rocket-1-mini")

        def make_source(self) -> PriceSource:
            return MyPrices()

A source prices what it knows and nothing else: a name it does not know, however close to one
it does (another provider, a Unicode look-alike), gets None, never a neighbour's price. No
name, however malformed, makes it raise: the loop asks it with whatever model string a user
typed.
"""

from __future__ import annotations

import math
from typing import ClassVar

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from .._messages import Usage
from .._pricing import Priced
from .._pricing import Prices
from .._pricing import PriceSource


def _usage(prompt: int, output: int, read: int, write: int) -> Usage:
    return Usage(
        prompt, output, cache_read_tokens=read, cache_write_tokens=min(write, prompt - read)
    )


#: The @given tests live here and run once per subclass, by design.
_SUPPRESSED = [HealthCheck.differing_executors]

#: A usage as a provider reports one: the cached tokens are part of the prompt's.
_usages = st.integers(0, 5_000_000).flatmap(
    lambda prompt: st.builds(
        _usage,
        st.just(prompt),
        st.integers(0, 2_000_000),
        st.integers(0, prompt),
        st.integers(0, prompt),
    )
)


class PriceSourceConformance:
    """Contract tests for a price source; subclass, define ``make_source`` and ``known_models``."""

    #: ``"provider:model"`` names the source prices (at least one).
    known_models: ClassVar[tuple[str, ...]] = ()

    def make_source(self) -> PriceSource:
        raise NotImplementedError("define make_source() in the conformance subclass")

    def _known(self) -> tuple[str, ...]:
        assert self.known_models, "name at least one model the source prices in known_models"
        return self.known_models

    def test_each_known_model_has_a_price(self) -> None:
        known = self._known()
        source = self.make_source()
        for model in known:
            price = source(model)
            assert isinstance(price, Priced), f"{model!r}: {price!r} has no cost(usage)"

    @settings(max_examples=60, deadline=None, suppress_health_check=_SUPPRESSED)
    @given(usage=_usages, more=st.integers(1, 1_000_000))
    def test_costs_are_dollars_that_grow_with_the_tokens(self, usage: Usage, more: int) -> None:
        """Finite and never negative; more prompt or output tokens never cost less."""
        source = self.make_source()
        for model in self._known():
            price = source(model)
            assert price is not None
            cost = price.cost(usage)
            assert isinstance(cost, float | int) and not isinstance(cost, bool), (
                f"{model!r}: cost {cost!r} is not a number of dollars"
            )
            assert math.isfinite(cost) and cost >= 0, f"{model!r}: {usage} costs {cost!r}"
            for grown in (usage + Usage(input_tokens=more), usage + Usage(output_tokens=more)):
                assert price.cost(grown) >= cost, f"{model!r}: {grown} costs less than {usage}"

    def test_the_same_name_gets_the_same_price(self) -> None:
        source = self.make_source()
        usage = Usage(123_456, 7_890, cache_read_tokens=1_000)
        for model in self._known():
            first, second = source(model), source(model)
            assert first is not None and second is not None
            assert first.cost(usage) == second.cost(usage), f"{model!r} priced twice differently"

    def test_a_name_it_does_not_know_has_no_price(self) -> None:
        """Never a neighbour's price: a look-alike, or the name under another provider, gets None.

        A dated snapshot of a known model (``claude-sonnet-4-5-20250929``) may share its price:
        how a source matches names within a provider is its own.
        """
        source = self.make_source()
        unknown = ["agentkit-conformance:no-such-model", "", ":", "no-colon-at-all"]
        for model in self._known():
            provider, _, name = model.partition(":")
            unknown += [
                f"{provider}:agentkit-conformance-no-such-model",
                f"agentkit-conformance-no-such-provider:{name}",
                f"{provider}:{_look_alike(name)}",
            ]
        priced = {m: p for m in unknown if (p := source(m)) is not None}
        assert priced == {}, f"the source priced models it cannot know: {priced}"

    @settings(max_examples=200, deadline=None, suppress_health_check=_SUPPRESSED)
    @given(text=st.text())
    def test_no_name_makes_it_raise(self, text: str) -> None:
        source = self.make_source()
        providers = {m.partition(":")[0] for m in self._known()}
        for model in (text, *(f"{p}:{text}" for p in sorted(providers))):
            try:
                price = source(model)
            except Exception as exc:
                raise AssertionError(f"the source raised {exc!r} for {model!r}") from exc
            assert price is None or isinstance(price, Priced), f"{model!r} -> {price!r}"

    def test_a_run_is_costed_through_it(self) -> None:
        """Behind the seam (``Prices``, as a run's metering uses it): the source's own cost."""
        source = self.make_source()
        prices = Prices({}, [source])
        usage = Usage(10_000, 2_000)
        for model in self._known():
            price = source(model)
            assert price is not None
            assert prices.cost(usage, model) == price.cost(usage)
        assert prices.cost(usage, "agentkit-conformance:no-such-model") is None


#: Latin letters and the Cyrillic ones drawn the same.
_CYRILLIC = str.maketrans("aeopcx", "аеорсх")


def _look_alike(name: str) -> str:
    """``name`` with its first letter that has a Cyrillic twin swapped for it."""
    for i, char in enumerate(name):
        if char.translate(_CYRILLIC) != char:
            return name[:i] + char.translate(_CYRILLIC) + name[i + 1 :]
    return name + "\u200b"  # no such letter: a zero-width space, invisible as well
