"""make_test_ctx: a RunContext for tests, with a scripted model when one is given; DictStore."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from .._context import Elicitor
from .._context import RunContext
from .._middleware import MiddlewareLike
from .._models import Model
from .._scope import Budget

if TYPE_CHECKING:
    from .._guardrails import Guardrail
    from .._plugins import PluginManager


def make_test_ctx(
    model: Model | None = None,
    *,
    middlewares: Sequence[MiddlewareLike] | None = None,
    run_id: str = "test-run",
    checkpointer: Any = None,
    store: Any = None,
    elicitor: Elicitor | None = None,
    budget: Budget | None = None,
    guardrail: Guardrail | None = None,
    manager: PluginManager | None = None,
) -> RunContext:
    """A RunContext for tests.

    With a model, ``ctx.invoker`` uses the default middlewares (tracing and metering) unless
    ``middlewares`` is given. Its calls are priced on ``manager``'s plugins and configuration
    (None, as for any run no agent has run yet: every cost unknown).
    """
    from .._invoke import default_middlewares

    ctx = RunContext(
        run_id=run_id,
        model=model,
        middlewares=default_middlewares() if middlewares is None else middlewares,
        checkpointer=checkpointer,
        store=store,
        elicitor=elicitor,
        budget=budget,
        guardrail=guardrail,
    )
    ctx.manager = manager
    return ctx


class DictStore:
    """The smallest ``ctx.store`` (a ``agentkit_core.plugin.KeyValueStore``): a dict in memory."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}

    async def get(self, key: str) -> str | None:
        """The value stored under ``key``, or None."""
        return self.data.get(key)

    async def put(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``."""
        self.data[key] = value
