"""What a request cost: a price per model, from the config's overrides or a price-source plugin.

A price is in US dollars per million tokens. :class:`Price` is a flat one (what most models
have); a price source may return anything with ``cost(usage) -> float`` for prices that are not
flat (tiers by prompt length). :func:`cost_of` prices one :class:`~agentkit_core.Usage`; a model
no source knows has no cost (None): never a guess. Each model's price is looked up once per
plugin manager and kept, so pricing a request is a dict lookup and a few multiplications.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Protocol
from typing import TypeAlias
from typing import runtime_checkable

from ._errors import ConfigError
from ._errors import PluginError
from ._messages import Usage
from ._records import record

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._messages import Message
    from ._plugins import PluginManager
    from ._scope import RunScope

_MILLION = 1_000_000.0


@runtime_checkable
class Priced(Protocol):
    """A model's price: what a usage of it costs, in US dollars."""

    def cost(self, usage: Usage) -> float: ...


@record(frozen=True, slots=True)
class Price:
    """A flat price in US dollars per million tokens.

    ``input`` prices the prompt tokens not read from or written to a cache; ``cache_read`` and
    ``cache_write`` those that were (None: priced as ``input``); ``output`` the generated
    tokens; ``reasoning`` the reasoning share of them (None: priced as ``output``, which is how
    every major provider bills it).
    """

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs at this price, in US dollars."""
        read = usage.cache_read_tokens
        write = usage.cache_write_tokens
        think = usage.reasoning_tokens
        total = (usage.input_tokens - read - write) * self.input
        total += read * (self.input if self.cache_read is None else self.cache_read)
        total += write * (self.input if self.cache_write is None else self.cache_write)
        if think and self.reasoning is not None:
            total += (usage.output_tokens - think) * self.output + think * self.reasoning
        else:
            total += usage.output_tokens * self.output
        return total / _MILLION


#: What a price-source plugin registers: given a model's name (``"openai:gpt-4o-mini"``),
#: its price, or None when the source does not know the model.
PriceSource: TypeAlias = Callable[[str], "Priced | None"]

_PRICE_KEYS = ("input", "output", "cache_read", "cache_write", "reasoning")


def price_from_table(name: str, table: Mapping[str, object], where: str) -> Price:
    """A :class:`Price` from a config table (``[prices."openai:my-model"]``), checked."""
    unknown = sorted(set(table) - set(_PRICE_KEYS))
    missing = [key for key in ("input", "output") if key not in table]
    bad = [
        key
        for key, value in table.items()
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0
    ]
    if unknown or missing or bad:
        raise ConfigError(
            f'{where}: [prices."{name}"] takes input and output (required), cache_read, '
            f"cache_write and reasoning, each US dollars per million tokens, 0 or more; "
            f"unknown keys {unknown}, missing {missing}, not a number {bad}",
            value=dict(table),
            source=where,
        )
    return Price(**{key: float(value) for key, value in table.items()})  # type: ignore[arg-type]


class Prices:
    """The prices one plugin manager knows: the config's overrides, then each price source.

    A model's price is looked up once and kept (its absence too). Only a ``"provider:model"``
    name is priced: a bare name (``"test"``) has no provider to price it.
    """

    def __init__(self, overrides: Mapping[str, Priced], sources: list[PriceSource]) -> None:
        self._known: dict[str, Priced | None] = dict(overrides)
        self._sources = sources

    def price(self, model: str) -> Priced | None:
        """``model``'s price, or None when no override or source knows it."""
        try:
            return self._known[model]
        except KeyError:
            pass
        found = None
        if ":" in model:
            for source in self._sources:
                found = source(model)
                if found is not None:
                    break
        self._known[model] = found
        return found

    def cost(self, usage: Usage, model: str) -> float | None:
        """What ``usage`` of ``model`` cost in US dollars, or None when its price is unknown."""
        try:
            price = self._known[model]
        except KeyError:
            price = self.price(model)
        return None if price is None else price.cost(usage)


_by_manager: weakref.WeakKeyDictionary[PluginManager, Prices] = weakref.WeakKeyDictionary()


def prices(manager: PluginManager) -> Prices:
    """The :class:`Prices` of ``manager``, kept per manager."""
    pm = manager.load()
    known = _by_manager.get(pm)
    if known is None:
        config = pm.config
        where = config.source_of("prices")
        overrides = {
            name: price_from_table(name, table, where) for name, table in config.prices.items()
        }
        sources = [_checked(reg.name, reg.plugin, reg.value) for reg in pm.registrations("prices")]
        known = _by_manager[pm] = Prices(overrides, sources)
    return known


def run_prices(scope: RunScope) -> Prices | None:
    """The prices ``scope``'s run is costed with: its manager's (None: it has none, so unknown).

    The metering middleware, the recorder and :func:`check_cost` see only the run; the agent
    that runs it gives it its manager (``scope.manager``), so no run reads the process-wide one.
    """
    return None if scope.manager is None else prices(scope.manager)


def _checked(name: str, plugin: str, source: object) -> PriceSource:
    if not callable(source):
        raise PluginError(
            f"price source {name!r} from plugin {plugin!r} is {source!r}, not a function "
            "from a model name to its price; report it to the plugin's authors",
            plugin=plugin,
        )
    return source  # type: ignore[return-value]


def cost_of(usage: Usage, model: str, *, manager: PluginManager) -> float | None:
    """What ``usage`` of the model named ``model`` cost, in US dollars; None when unknown.

    ``model`` is a model's name (``"anthropic:claude-sonnet-4-5"``). The price comes from the
    configuration's ``[prices."NAME"]`` table, else from a price-source plugin
    (``agentkit-pricing-genai``); a model none of them knows has no cost, never a guessed one.
    """
    return prices(manager).cost(usage, model)


def check_cost(scope: RunScope, model: str, messages: Iterable[Message]) -> None:
    """Refuse a call to ``model`` with ``messages`` when a run's cost limit would not hold.

    Nothing to do (no lookup, no estimate) unless the run or one above it sets ``max_cost``.
    """
    run: RunScope | None = scope
    while run is not None and run.budget.max_cost is None:
        run = run.parent
    if run is None:
        return
    known = run_prices(scope)
    price = None if known is None else known.price(model)
    estimate = None
    if price is not None:
        estimate = price.cost(Usage(input_tokens=scope.sent_tokens(messages)))
    scope.check_request(model, estimate)
