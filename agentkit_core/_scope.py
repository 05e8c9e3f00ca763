"""The per-run scope: what identifies and bounds one run, below every seam that reads it.

A run's id, the run that started it, its budget and what it has spent, its scratchpad, its
trace and whether a secret reached it. :class:`RunScope` holds them; the loop's
:class:`~agentkit_core.RunContext` extends it with the run's services (its invoker,
checkpointer, recorder, policy, guardrail, elicitor). Low floors type what they receive by
this scope, never by the services above them.
"""

from __future__ import annotations

import contextvars
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from ._errors import ConfigError
from ._messages import Usage
from ._records import record
from ._run_errors import BudgetExceeded
from ._tables import wrong_kind
from ._tokens import SentTokens
from ._tracing import Trace
from ._tracing import current_call_id

if TYPE_CHECKING:
    from ._context import RunContext
    from ._plugins import PluginManager


class Scratchpad(dict[str, Any]):
    """A dict that only accepts JSON-serializable values, so it always survives a checkpoint."""

    def __setitem__(self, key: str, value: Any) -> None:
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"scratchpad[{key!r}] must be JSON-serializable, got {type(value).__name__}: "
                f"{exc}; encode it first (agentkit_core.plugin.encode_state)",
                value=value,
                source="scratchpad",
            ) from exc
        super().__setitem__(key, value)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]


#: Levels of child agents that may nest below a run whose budget sets no other ``max_depth``:
#: a parent, its children and theirs make two; five leaves room for real delegation trees and
#: still stops an agent that calls itself before it has used more than a few runs' worth.
DEFAULT_MAX_DEPTH = 5
#: What a run has used before its first call.
_NONE = Usage()


@record(slots=True)
class Budget:
    """Limits of one run; None is unlimited. Exceeding one raises :class:`BudgetExceeded`.

    ``max_tokens`` and ``max_requests`` are checked before each model call (a run that has
    made ``max_requests`` calls makes no more; a prompt whose estimated tokens alone pass what
    is left of ``max_tokens`` is not sent) and after it, on what it used.
    ``max_cost`` (US dollars) is checked before each call, with the estimated cost of its
    prompt (a call that would pass it is not made), and after, with the call's actual cost; a
    model whose price is unknown cannot be held to it and is refused. ``max_tool_calls`` is
    checked before each tool call. ``max_depth`` is how many levels of child agents may nest
    below the run (0: it starts none; :data:`DEFAULT_MAX_DEPTH` by default). A child run is
    checked against the budget of every run above it, so the tightest applies, and the run
    whose limit it passed fails.
    """

    max_tokens: int | None = None
    max_requests: int | None = None
    max_depth: int | None = DEFAULT_MAX_DEPTH
    max_cost: float | None = None
    max_tool_calls: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_cost", "max_tool_calls"):
            value = getattr(self, name)
            whole = name == "max_tool_calls"
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int if whole else (int, float))
                or value < 0
            ):
                raise ConfigError(
                    f"Budget({name}={value!r}) must be "
                    + ("a whole number, 0 or more" if whole else "US dollars, 0 or more")
                    + ", or None for no limit",
                    value=value,
                    source=f"Budget({name}=)",
                )
        depth = self.max_depth
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 0
        ):
            raise ConfigError(
                f"Budget(max_depth={depth!r}) must be a whole number of levels, 0 or more (0: "
                f"the run starts no child agent), or None for no limit; the default is "
                f"{DEFAULT_MAX_DEPTH}",
                value=depth,
                source="Budget(max_depth=)",
            )

    def check(self, usage: Usage) -> None:
        """Raise :class:`BudgetExceeded` when ``usage`` is past the token or request limit."""
        exc = None
        if self.max_tokens is not None and usage.total_tokens > self.max_tokens:
            used = f"used {usage.total_tokens} of {self.max_tokens}"
            exc = BudgetExceeded(
                f"token budget exceeded: {used}; raise Budget(max_tokens=...) or compact the "
                "transcript"
            )
            exc.limit, exc.used = "token", used
        elif self.max_requests is not None and usage.requests > self.max_requests:
            used = f"made {usage.requests} of {self.max_requests}"
            exc = BudgetExceeded(
                f"request budget exceeded: {used} model calls; raise Budget(max_requests=...)"
            )
            exc.limit, exc.used = "request", used
        if exc is not None:
            raise exc

    def limits(self) -> bool:
        """Whether any spending limit is set (tokens, requests, cost or tool calls)."""
        return not (
            self.max_tokens is None
            and self.max_requests is None
            and self.max_cost is None
            and self.max_tool_calls is None
        )


def _exceeded(limit: str, used: object, about: str, advice: str) -> BudgetExceeded:
    exc = BudgetExceeded(f"{limit} budget exceeded: {used}, {about}; {advice}")
    exc.limit = limit
    exc.used = used
    exc.about = about
    return exc


#: Seconds one model call may take in all — its retries, their waits and a whole stream
#: included — before :class:`ModelDeadlineExceeded`. A stream that only ever sends keep-alives
#: resets every per-read timeout; only a total deadline ends it.
DEFAULT_MODEL_DEADLINE = 600.0


def check_deadline(
    deadline: float | None,
    name: str = "model_deadline",
    default: float = DEFAULT_MODEL_DEADLINE,
) -> float | None:
    """``deadline`` in seconds, or None for none; anything else is refused, naming ``name``."""
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not deadline > 0:
        raise ConfigError(
            f"{name}={deadline!r} must be a positive number of seconds (or None for no "
            f"deadline; the default is {default:g})",
            value=deadline,
            source=f"{name}=",
        )
    return float(deadline)


#: The run whose loop is executing in this task (and the tasks it starts): what a producer that
#: passes no ``ctx=`` is checked against.
_current_run: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar(
    "agentkit_current_run", default=None
)


def current_run() -> RunContext | None:
    """The context of the agent run executing in this task, or None outside a run."""
    return _current_run.get()


def _uuid4_hex() -> str:
    """``uuid.uuid4().hex``, without importing :mod:`uuid` (and :mod:`platform`) on a first run."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # RFC 4122 variant
    return raw.hex()


class RunScope:
    """What identifies and bounds one run (the base of :class:`~agentkit_core.RunContext`).

    ``parent`` is the run that started this one (a child agent's caller); ``depth`` how many
    runs are above it. Taint never clears, and it spreads: a run started with ``parent=``
    taints its parent when it is tainted, and starts tainted when its parent already is; what
    it spends counts against its parent's budget too. ``checkpoint_at`` is the ``(run_id,
    namespace)`` its checkpoints are written under when not its own (a child agent's go under
    its parent's run).
    """

    def __init__(
        self,
        *,
        run_id: str | None = None,
        parent: RunScope | None = None,
        budget: Budget | None = None,
    ) -> None:
        for key, value, kind in (
            ("run_id", run_id, str),
            ("parent", parent, RunScope),
            ("budget", budget, Budget),
        ):
            if value is not None and not isinstance(value, kind):
                raise wrong_kind(f"{type(self).__name__}({key}=)", f"a {kind.__name__}", value)
        self.run_id = run_id or _uuid4_hex()
        #: The run that started this one (a child agent's caller), or None.
        self.parent = parent
        #: How many runs are above this one: 0 for a run nobody started, 1 for its child...
        self.depth: int = 0 if parent is None else parent.depth + 1
        #: The agent this run is a run of (the agent binds it), else None.
        self.agent_name: str | None = None
        self._tainted = parent is not None and parent.secret_tainted
        self.budget = budget or Budget()
        self.scratchpad = Scratchpad()
        self.usage = Usage()
        #: US dollars the run's priced model calls cost; :attr:`cost` says whether all were.
        self.spent = 0.0
        #: The models of the run's calls that no price was found for.
        self.unpriced: set[str] = set()
        #: The run's usage per model name (the model that answered, in a fallback chain).
        self.usage_by_model: dict[str, Usage] = {}
        #: Tool calls the run has started (its children's included).
        self.tool_calls = 0
        self.trace = Trace(run_id=self.run_id, tainted=self._is_tainted)
        #: The estimate of each request's input tokens, for a budget's checks before a call.
        self.sent_tokens = SentTokens()
        self.checkpoint_at: tuple[str, str] | None = None
        #: The plugin manager whose prices the run's model calls are costed with: the agent's
        #: (an agent sets it on a run it starts or is given), a child run's parent's. None (a
        #: run built by hand, not yet run by an agent): every cost is unknown.
        self.manager: PluginManager | None = None if parent is None else parent.manager

    def _check_depth(self) -> None:
        """Refuse this child run if it nests deeper than a run above it allows (``max_depth``).

        The outermost run whose limit it passes is the one that fails, as with spending: the
        :class:`BudgetExceeded` carries its ``run_id`` and names every run from the root down.
        """
        runs: list[RunScope] = []
        run: RunScope | None = self
        while run is not None:
            runs.append(run)
            run = run.parent
        runs.reverse()
        for above in runs[:-1]:
            limit = above.budget.max_depth
            levels = self.depth - above.depth
            if limit is not None and levels > limit:
                chain = " -> ".join(map(_label, runs))
                exc = BudgetExceeded(
                    f"child agent {self.agent_name!r} would nest {levels} deep below "
                    f"{_label(above)!r} (run {above.run_id}), past its Budget(max_depth="
                    f"{limit}): {chain}; an agent that reaches itself again needs a task that "
                    "ends, or raise Budget(max_depth=...) on that agent"
                )
                exc.run_id = above.run_id
                raise exc

    @property
    def secret_tainted(self) -> bool:
        """Whether a secret answer reached this run (it is then never checkpointed)."""
        return self._tainted

    @secret_tainted.setter
    def secret_tainted(self, value: bool) -> None:
        if value:
            self.taint()
        elif self._tainted:
            raise ConfigError(
                f"run {self.run_id!r} is secret-tainted and the taint cannot be cleared: the "
                "secret is in its transcript; start a new run instead",
                value=value,
                source="RunContext.secret_tainted",
            )

    def _is_tainted(self) -> bool:
        """:attr:`secret_tainted` as a function, for the trace to ask at each span's ends."""
        return self._tainted

    def taint(self) -> None:
        """Mark this run, and every run above it, secret-tainted."""
        run: RunScope | None = self
        while run is not None and not run._tainted:
            run._tainted = True
            run = run.parent

    def report_progress(
        self,
        progress: float,
        total: float | None = None,
        message: str = "",
        *,
        call_id: str | None = None,
    ) -> None:
        """Say how far a tool call has got: a ``tool_progress`` event.

        For whoever streams the run's events (``Agent.run_stream_events``); without one this
        does nothing. ``call_id`` defaults to the call whose tool is running in this task.
        """
        events = self.trace.events
        if events is None:
            return
        from ._events import ToolProgress  # built only for a run whose events are streamed

        events.emit(
            ToolProgress,
            self.run_id,
            call_id=current_call_id() if call_id is None else call_id,
            progress=progress,
            total=total,
            message=message,
        )

    @property
    def cost(self) -> float | None:
        """US dollars the run's model calls cost; None when a model's price was unknown."""
        return None if self.unpriced else self.spent

    def add_usage(self, usage: Usage, model: str | None = None, cost: float | None = None) -> None:
        """Add a call's usage to the run (and its parents') and enforce each budget.

        ``model`` names the model that answered (its usage is kept per model too) and
        ``cost`` what the call cost (None: its price is unknown). The parents' budgets are
        checked first: spending past an ancestor's limit fails that ancestor's run. The
        :class:`BudgetExceeded` names the run whose budget it was.
        """
        if self.parent is not None:
            self.parent.add_usage(usage, model, cost)
        before = self.usage
        self.usage = total = before + usage
        if model is not None:
            by_model = self.usage_by_model
            known = by_model.get(model)
            if known is before or (known is None and not by_model and before == _NONE):
                by_model[model] = total  # one model has made every call: its sum is the run's
            else:
                by_model[model] = usage if known is None else known + usage
            if cost is None:
                self.unpriced.add(model)
            else:
                self.spent += cost
        budget = self.budget
        if type(budget) is Budget and not budget.limits():
            return  # no limit to check (the usual run): no call and no handler a model call
        try:
            budget.check(self.usage)
            if budget.max_cost is not None and self.spent > budget.max_cost:
                raise _exceeded(
                    "cost",
                    f"spent ${self.spent:.4f} of ${budget.max_cost:.4f}",
                    f"after a call to {model or 'a model'}",
                    "raise Budget(max_cost=...)",
                )
        except BudgetExceeded as exc:
            exc.run_id = self.run_id
            if exc.about is None:
                exc.about = f"after a call to {model or 'a model'}"
            raise

    def check_call(self, estimate: Callable[[], int]) -> None:
        """Refuse a model call a run's request or token limit certainly cannot take.

        Before the call: a run that has made ``max_requests`` calls makes no more, and one is
        refused when its prompt alone (``estimate()`` input tokens, asked only when a run sets
        ``max_tokens``) is more than what is left of ``max_tokens``. Every run from the
        outermost down, as :meth:`add_usage` checks them after the call.
        """
        run: RunScope | None = self
        while run is not None:
            budget = run.budget
            if budget.max_requests is not None or budget.max_tokens is not None:
                break
            run = run.parent
        else:
            return  # no run sets either limit (the usual run): no list made, no estimate
        runs: list[RunScope] = []
        while run is not None:
            if run.budget.max_requests is not None or run.budget.max_tokens is not None:
                runs.append(run)
            run = run.parent
        tokens: int | None = None
        for run in reversed(runs):
            budget, usage = run.budget, run.usage
            exc = None
            if budget.max_requests is not None and usage.requests >= budget.max_requests:
                exc = _exceeded(
                    "request",
                    f"made {usage.requests} of {budget.max_requests} model calls",
                    f"about to make model call {usage.requests + 1}",
                    "raise Budget(max_requests=...)",
                )
            elif budget.max_tokens is not None:
                tokens = estimate() if tokens is None else tokens
                if tokens > budget.max_tokens - usage.total_tokens:
                    exc = _exceeded(
                        "token",
                        f"used {usage.total_tokens} of {budget.max_tokens}",
                        f"about to send a prompt estimated at {tokens} tokens",
                        "raise Budget(max_tokens=...) or compact the transcript",
                    )
            if exc is not None:
                exc.run_id = run.run_id
                raise exc

    def check_request(self, model: str, estimate: float | None) -> None:
        """Refuse a call to ``model`` that would pass a run's cost limit, before it is made.

        ``estimate`` is the estimated cost of the call's prompt (None: the model's price is
        unknown, which no cost limit can be kept with). This run and every run above it.
        """
        run: RunScope | None = self
        while run is not None:
            limit = run.budget.max_cost
            if limit is not None:
                about = f"about to call {model}"
                if estimate is None:
                    exc = _exceeded(
                        "cost",
                        f"spent ${run.spent:.4f} of ${limit:.4f}",
                        f"{about}, whose price is unknown",
                        f'set its price under [prices."{model}"] in agentkit.toml or '
                        "install a price source (agentkit-pricing-genai)",
                    )
                elif run.spent + estimate > limit:
                    exc = _exceeded(
                        "cost",
                        f"spent ${run.spent:.4f} of ${limit:.4f}",
                        f"{about} with a prompt estimated at ${estimate:.4f}",
                        "raise Budget(max_cost=...)",
                    )
                else:
                    exc = None
                if exc is not None:
                    exc.run_id = run.run_id
                    raise exc
            run = run.parent

    def add_tool_call(self, tool: str) -> None:
        """Count a tool call about to start, here and above; refuse one past a limit."""
        run: RunScope | None = self
        while run is not None:
            limit = run.budget.max_tool_calls
            if limit is not None and run.tool_calls + 1 > limit:
                exc = _exceeded(
                    "tool call",
                    f"made {run.tool_calls} of {limit}",
                    f"about to call tool {tool!r}",
                    "raise Budget(max_tool_calls=...)",
                )
                exc.run_id = run.run_id
                raise exc
            run = run.parent
        run = self
        while run is not None:
            run.tool_calls += 1
            run = run.parent


def _label(run: RunScope) -> str:
    """The agent ``run`` is a run of, as a chain of runs names it (the agent binds its name)."""
    return run.agent_name if run.agent_name is not None else f"run {run.run_id}"
