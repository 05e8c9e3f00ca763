"""Contested fields: the hook chains of a run and the rule that folds each one.

A contested field is a place several layers want to set. :class:`Hooks` holds, per field, the
implementations in call order, each with the name of whoever contributed it (a plugin, or
``"user"``), and folds them with the field's rule. The loop calls only these fold methods, so a
plugin's hook and a user's hook are the same thing to it.

Every implementation is called the way pluggy calls one: with the arguments it declares, by
name, so it may take any subset of its hook's arguments. One loop (:meth:`Hooks._fold`) runs
every field; a field differs only in its :class:`_Rule`: what a hook may return and how the
returns combine. What an implementation returns is checked, what it raises is attributed to it,
an async one has a deadline and a synchronous one that holds the event loop is reported.
"""

from __future__ import annotations

import asyncio
import inspect
import reprlib
import sys
import warnings
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import field
from threading import get_ident
from time import perf_counter
from time import thread_time
from types import GeneratorType
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import TypeVar

from ._errors import ConfigError
from ._errors import GuardrailViolation
from ._errors import HookError
from ._errors import HookTimeoutError
from ._errors import SlowHookWarning
from ._errors import UsageError
from ._hookfields import ARGUMENTS as ARGUMENTS
from ._hookfields import FIELDS as FIELDS
from ._hookfields import declared_arguments as declared_arguments
from ._messages import Message
from ._messages import ToolCall
from ._models import ModelRequest
from ._models import ModelResponse
from ._records import quick_init
from ._records import record
from ._run_errors import RunError
from ._tools import ToolResult
from ._tracing import Span

if TYPE_CHECKING:
    from ._context import RunContext
    from ._plugins import PluginManager

T = TypeVar("T")

#: A rule's extra check of a hook's return, past its type.
_Check = Callable[[Any], bool]
#: One implementation: who contributed it, and the function.
HookImpl = tuple[str, Callable[..., object]]

#: Seconds an async hook may take before it is cancelled (``Hooks(timeout=...)``).
DEFAULT_TIMEOUT = 30.0
#: CPU seconds a synchronous hook may spend on the event loop before it is reported
#: (``Hooks(slow=...)``). CPU time of the loop's thread, so a loaded machine, where the OS runs
#: other processes in the middle of a call, does not make a fast hook look slow.
DEFAULT_SLOW = 0.1
#: A synchronous hook that waits without computing (a blocking HTTP call, ``time.sleep``) uses
#: no CPU but holds the loop all the same: it is reported past this many times ``slow`` of
#: wall-clock time, a margin wide enough for a loaded machine's pauses.
BLOCKED_FACTOR = 5

#: Seconds of wall-clock time a fold trusts the last CPU-clock reading for. Reading the CPU
#: clock is a system call (~0.4 µs, more than a bare hook call), so a fold reads it only when
#: the last reading is older than this, and again after a slow call or an await.
_CPU_FRESH = 0.001

#: Each thread's last CPU-clock reading: its CPU time, its count of waits (see
#: :func:`_cpu_reading`), and the wall-clock time it was read at.
_cpu_marks: dict[int, tuple[float, int, float]] = {}
#: The wall-clock time until which the last reading (any thread's) is fresh: a plain global,
#: the one thing a fold reads of them (a ``threading.local`` costs ~0.1 µs a read). A thread
#: whose own reading is older gets a looser bound on a slow call's CPU time, never a wrong one.
_cpu_fresh_until = float("-inf")


if sys.platform == "linux":
    from resource import RUSAGE_THREAD
    from resource import getrusage

    def _cpu_reading() -> tuple[float, int]:
        """The thread's CPU time and how often it gave up the CPU to wait (voluntary switches).

        A hook that held the loop without computing either waited (a blocking call: the
        count grows) or was left runnable while the OS ran other processes (a crowded CPU:
        it does not), and only the first is the hook's doing.
        """
        usage = getrusage(RUSAGE_THREAD)
        return usage.ru_utime + usage.ru_stime, usage.ru_nvcsw

else:

    def _cpu_reading() -> tuple[float, int]:
        """The thread's CPU time; no count of waits here (-1: every long hold counts as one)."""
        return thread_time(), -1


def _read_cpu(wall: float) -> None:
    global _cpu_fresh_until
    _cpu_marks[get_ident()] = (*_cpu_reading(), wall)
    _cpu_fresh_until = wall + _CPU_FRESH


#: A thread's reading before its first: it bounds nothing (the CPU time then counts as 0, and
#: the call as having waited).
_NEVER_READ = (0.0, -1, float("-inf"))


def _restart() -> float:
    """The wall clock after an await, with a CPU reading fresh enough for what follows."""
    now = perf_counter()
    if now > _cpu_fresh_until:
        _read_cpu(now)
    return now


#: No value a hook returns is this: a fold whose returns must each be checked skips none.
_NO = object()


#: What a hook may raise that passes through unchanged: a verdict (a guardrail refusing), a run
#: that cannot go on (budget, elicitation...), the user's own misconfiguration, and an inner
#: hook's error, already attributed. Anything else becomes a :class:`HookError` naming the hook.
PASSED_THROUGH: tuple[type[BaseException], ...] = (
    GuardrailViolation,
    RunError,
    UsageError,
    HookError,
)

DECISION_RANK = {"allow": 0, "ask": 1, "deny": 2}


@quick_init
@record(frozen=True, slots=True)
class ToolDecision:
    """A before_tool_call verdict: ``allow``, ``ask`` (a person approves) or ``deny``.

    ``source`` names who decided (the fold fills in the plugin); ``rule`` the rule that decided,
    for a decider that has rules (a policy engine), so the record says which one held a call.
    """

    kind: Literal["allow", "ask", "deny"]
    reason: str = ""
    source: str = ""
    rule: str = ""

    @classmethod
    def allow(cls, reason: str = "", *, rule: str = "") -> ToolDecision:
        return cls("allow", reason, rule=rule)

    @classmethod
    def ask(cls, reason: str = "", *, rule: str = "") -> ToolDecision:
        return cls("ask", reason, rule=rule)

    @classmethod
    def deny(cls, reason: str = "", *, rule: str = "") -> ToolDecision:
        return cls("deny", reason, rule=rule)


#: The fold's start: no hook has an opinion (frozen, so one serves every call).
_ALLOW = ToolDecision("allow", "", "")


@record(frozen=True, slots=True)
class StopDecision:
    """Why a run stopped after a turn, and which hook said so."""

    reason: str
    source: str


@quick_init
@record(frozen=True, slots=True)
class TurnInfo:
    """What the turn hooks receive: the turn number (from 1); after a turn, what it did."""

    turn: int
    response: ModelResponse | None = None
    tool_results: tuple[ToolResult, ...] = ()


def fold_decisions(first: ToolDecision | None, then: ToolDecision) -> ToolDecision:
    """Deny over ask over allow; on a tie the first (the policy engine's) stands."""
    if first is None or DECISION_RANK[then.kind] > DECISION_RANK[first.kind]:
        return then
    return first


# ---------------------------------------------------------------------- the fields' rules


def _known_decision(value: ToolDecision | str) -> bool:
    kind = value if isinstance(value, str) else value.kind
    return isinstance(kind, str) and kind in DECISION_RANK


def _all_messages(value: Sequence[object]) -> bool:
    return all(isinstance(m, Message) for m in value)


@record(frozen=True, slots=True)
class _Rule:
    """What one field's hooks may return, and how their returns combine.

    ``chain``: each non-None return replaces argument ``slot`` for the next hook, and the last
    is the result. ``first``: the first non-None return ends the fold. ``all``: every non-None
    return is kept, with its source, for the field's method to combine.
    """

    hook: str
    fold: Literal["chain", "first", "all"]
    types: tuple[type[object], ...]
    allowed: str
    check: _Check | None = None
    slot: int = 1
    #: A list return is copied, so no hook holds a list another hook is handed.
    copy: bool = False


_LIST = (list, tuple)
_RULES: dict[str, _Rule] = {
    "before_model_call": _Rule(
        "agentkit_before_model_call", "chain", (ModelRequest,), "a ModelRequest, or None"
    ),
    "before_tool_call": _Rule(
        "agentkit_before_tool_call",
        "all",
        (ToolDecision, str),
        "a ToolDecision, one of the strings 'allow', 'ask', 'deny', or None",
        _known_decision,
    ),
    "after_tool_call": _Rule(
        "agentkit_after_tool_call", "chain", (ToolResult,), "a ToolResult, or None", slot=2
    ),
    "output_guard": _Rule("agentkit_output_guard", "chain", (Message,), "a Message, or None"),
    "should_stop_after_turn": _Rule(
        "agentkit_should_stop_after_turn",
        "first",
        (str,),
        "a non-empty reason string, or None",
        bool,
    ),
    "before_turn": _Rule(
        "agentkit_before_turn", "all", _LIST, "a list of Messages, or None", _all_messages
    ),
    "transform": _Rule(
        "agentkit_transform",
        "chain",
        _LIST,
        "a list of Messages, or None",
        _all_messages,
        copy=True,
    ),
}


# ---------------------------------------------------------------------- calling convention


def _caller(
    fn: Callable[..., object], names: tuple[str, ...], spec: tuple[str, ...]
) -> Callable[..., object]:
    """A function of the field's arguments (in spec order) that calls ``fn`` with ``names``.

    Built once per implementation: the usual full signature is ``fn`` itself.
    """
    if names == spec:
        return fn
    picks = tuple(spec.index(n) for n in names)
    if not picks:
        return lambda *_: fn()
    if len(picks) == 1:
        (only,) = picks
        return lambda *args: fn(args[only])
    return lambda *args: fn(*[args[i] for i in picks])


@record(frozen=True, slots=True)
class _Plan:
    """One implementation, ready to call: whose it is, the function, and how to call it."""

    source: str
    fn: Callable[..., object]
    call: Callable[..., object]


def _plans(field_name: str, impls: Sequence[object]) -> tuple[_Plan, ...]:
    spec = ARGUMENTS[field_name]
    plans: list[_Plan] = []
    for impl in impls:
        if not (isinstance(impl, tuple) and len(impl) == 2 and isinstance(impl[0], str)):
            raise ConfigError(
                f"Hooks({field_name}=...) takes (source, function) pairs, got {impl!r}; use "
                f"Hooks.of({field_name}=function) for your own functions",
                value=impl,
                source="Hooks",
            )
        source, fn = impl
        try:
            names = declared_arguments(field_name, fn)
        except TypeError as exc:
            raise ConfigError(
                f"hook agentkit_{field_name} of {source!r} ({_name_of(fn)}): {exc}",
                value=fn,
                source="Hooks",
            ) from None
        plans.append(_Plan(source, fn, _caller(fn, names, spec)))
    return tuple(plans)


#: One field of a Hooks, ready to fold, unpacked at once by the loop: its plans, its rule, the
#: rule's kind, slot, types, check and copy, and whether a chain's returns go unchecked (not
#: copied: a hook handing back its value changes nothing). A plain tuple: only unpacked, and a
#: NamedTuple class cost the import ~1.3 M instructions (its methods compiled from text).
_Fold = tuple[
    tuple[_Plan, ...], _Rule, str, int, tuple[type[object], ...], _Check | None, bool, bool
]


def _fold_of(rule: _Rule, plans: tuple[_Plan, ...]) -> _Fold:
    unchecked = rule.fold == "chain" and not rule.copy
    return (plans, rule, rule.fold, rule.slot, rule.types, rule.check, rule.copy, unchecked)


# ---------------------------------------------------------------------- awaiting

_AWAITABLE: dict[type, bool] = {}


def _awaitable(value: object) -> bool:
    """Whether a hook's result must be awaited; cached per type, because folds are hot."""
    kind = type(value)
    known = _AWAITABLE.get(kind)
    if known is None:
        if isinstance(value, GeneratorType):  # only some generators are awaitable: ask each
            return inspect.isawaitable(value)
        known = _AWAITABLE[kind] = inspect.isawaitable(value)
    return known


async def _within(pending: Awaitable[T], seconds: float) -> tuple[bool, T | None]:
    """``(True, result)``, or ``(False, None)`` when ``seconds`` passed (it is cancelled)."""
    try:
        async with asyncio.timeout(seconds) as scope:
            return True, await pending
    except TimeoutError:
        if scope.expired():
            return False, None
        raise  # the hook's own TimeoutError, not the deadline


# ---------------------------------------------------------------------- reporting

_abridge = reprlib.Repr()
_abridge.maxstring = _abridge.maxother = 80
_abridge.maxlist = _abridge.maxtuple = _abridge.maxdict = 4


def _name_of(fn: object) -> str:
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}" if module else name


def _where(plan: _Plan, rule: _Rule) -> str:
    return f"hook {rule.hook} of plugin {plan.source!r} ({_name_of(plan.fn)})"


def _refused(plan: _Plan, rule: _Rule, value: object) -> HookError:
    """The error for a return value the field does not allow, naming the item that is wrong."""
    what = f"{_abridge.repr(value)} ({type(value).__name__})"
    if isinstance(value, _LIST) and rule.check is _all_messages:
        index, item = next((i, m) for i, m in enumerate(value) if not isinstance(m, Message))
        what = (
            f"a {type(value).__name__} whose item {index} is {_abridge.repr(item)} "
            f"({type(item).__name__})"
        )
    remedy = "Fix the hook"
    if plan.source != "user":  # the kit's and Hooks.of's name for the user's own functions
        remedy += f", or leave the plugin out (AGENTKIT_DISABLE_PLUGINS={plan.source})"
    return HookError(
        f"{_where(plan, rule)} returned {what}; allowed: {rule.allowed}. {remedy}",
        plugin=plan.source,
        hook=rule.hook,
        value=value,
        allowed=rule.allowed,
    )


def _raised(plan: _Plan, rule: _Rule, exc: BaseException) -> HookError:
    return HookError(
        f"{_where(plan, rule)} raised {type(exc).__name__}: {exc}",
        plugin=plan.source,
        hook=rule.hook,
    )


def _span(ctx: object, plan: _Plan, rule: _Rule, start: float, **attributes: object) -> Span:
    """Record the call on the run's trace, after the fact (only overruns are recorded)."""
    span = Span(
        "hook",
        {"hook": rule.hook, "plugin": plan.source, "function": _name_of(plan.fn), **attributes},
        start=start,
        end=perf_counter(),
    )
    trace = getattr(ctx, "trace", None)
    if trace is not None and trace.keep:
        trace.spans.append(span)
    return span


# ---------------------------------------------------------------------- Hooks


def _check_seconds(name: str, value: object, alternative: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(
            f"Hooks {name}= must be a positive number of seconds{alternative}, got {value!r}",
            value=value,
            source=f"Hooks({name}=...)",
        )


@record(frozen=True, slots=True)
class Hooks:
    """The contested-field implementations of a run, per field, in call order.

    Build it from plugins with :meth:`from_plugins`, from your own functions with
    ``Hooks(before_model_call=[("user", fn)])`` or :meth:`of`, and combine with :meth:`merged`
    (the left side's implementations are called first). Each implementation is called with the
    arguments it names (any subset of its hook's); a parameter its hook does not pass is a
    :class:`ConfigError` here.

    ``timeout`` is the deadline of an async hook in seconds (None: none), after which it is
    cancelled and the run fails with :class:`HookTimeoutError`. ``slow`` is how long a
    synchronous hook may hold the event loop before it is reported, as a ``hook`` span on the
    run's trace and a :class:`SlowHookWarning`; it is not interrupted.
    """

    before_model_call: tuple[HookImpl, ...] = ()
    before_tool_call: tuple[HookImpl, ...] = ()
    after_tool_call: tuple[HookImpl, ...] = ()
    output_guard: tuple[HookImpl, ...] = ()
    should_stop_after_turn: tuple[HookImpl, ...] = ()
    before_turn: tuple[HookImpl, ...] = ()
    transform: tuple[HookImpl, ...] = ()
    timeout: float | None = DEFAULT_TIMEOUT
    slow: float = DEFAULT_SLOW
    #: Filled in by ``__post_init__``: whether any field has an implementation.
    empty: bool = field(default=True, init=False, compare=False)
    _folds: dict[str, _Fold] = field(default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.timeout is not None:
            _check_seconds("timeout", self.timeout, " or None")
        _check_seconds("slow", self.slow, "")
        for name in FIELDS:
            given = getattr(self, name)
            if isinstance(given, str | bytes | Mapping) or not isinstance(given, Iterable):
                raise ConfigError(
                    f"Hooks({name}=...) takes a list of (source, function) pairs, got "
                    f"{given!r:.200}; use Hooks.of({name}=function) for your own functions",
                    value=given,
                    source="Hooks",
                )
            impls = tuple(given)
            object.__setattr__(self, name, impls)
            self._folds[name] = _fold_of(_RULES[name], _plans(name, impls))
        object.__setattr__(self, "empty", not any(getattr(self, n) for n in FIELDS))

    @classmethod
    def of(
        cls,
        source: str = "user",
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        slow: float = DEFAULT_SLOW,
        **fns: Callable[..., object] | Sequence[Callable[..., object]],
    ) -> Hooks:
        """Hooks from plain functions, all attributed to ``source``: ``Hooks.of(transform=f)``."""
        fields: dict[str, tuple[HookImpl, ...]] = {}
        for name, value in fns.items():
            if name not in FIELDS:
                raise ConfigError(
                    f"unknown contested field {name!r}; the fields are {', '.join(FIELDS)}",
                    value=name,
                    source="Hooks.of",
                )
            items = value if isinstance(value, Sequence) else [value]
            fields[name] = tuple((source, fn) for fn in items)
        return cls(**fields, timeout=timeout, slow=slow)

    @classmethod
    def from_plugins(
        cls,
        manager: PluginManager,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        slow: float = DEFAULT_SLOW,
    ) -> Hooks:
        """Every plugin ``manager`` loaded: its contested-field hooks, in plugin order."""
        impls = {name: tuple(manager.hook_impls(f"agentkit_{name}")) for name in FIELDS}
        return cls(**impls, timeout=timeout, slow=slow)

    def merged(self, other: Hooks) -> Hooks:
        """Both sets: this one's implementations first, then ``other``'s; this one's limits."""
        if other.empty:  # nothing to add (a kit without hooks of its own): no plans to redo
            return self
        fields = {n: getattr(self, n) + getattr(other, n) for n in FIELDS}
        return Hooks(**fields, timeout=self.timeout, slow=self.slow)

    # -------------------------------------------------------------- the folds

    # The chains return the fold's own coroutine (no second one to await on a hot path).

    def run_before_model_call(
        self, ctx: RunContext, request: ModelRequest
    ) -> Coroutine[object, None, ModelRequest]:
        """Each in order, each sees the request the previous left."""
        return self._fold("before_model_call", (ctx, request))

    async def run_before_tool_call(self, ctx: RunContext, call: ToolCall) -> ToolDecision:
        """Every one is asked; deny wins over ask over allow; the first of the winning kind."""
        best = _ALLOW
        for source, out in await self._fold("before_tool_call", (ctx, call)):
            decision = ToolDecision(out) if isinstance(out, str) else out  # type: ignore[arg-type]
            if DECISION_RANK[decision.kind] > DECISION_RANK[best.kind]:
                best = ToolDecision(decision.kind, decision.reason, source, decision.rule)
        return best

    def run_after_tool_call(
        self, ctx: RunContext, call: ToolCall, result: ToolResult
    ) -> Coroutine[object, None, ToolResult]:
        """Each in order may replace the result."""
        return self._fold("after_tool_call", (ctx, call, result))

    def run_output_guard(
        self, ctx: RunContext, message: Message
    ) -> Coroutine[object, None, Message]:
        """Each in order sees the message the previous left."""
        return self._fold("output_guard", (ctx, message))

    async def run_should_stop_after_turn(
        self, ctx: RunContext, turn: TurnInfo
    ) -> StopDecision | None:
        """The first that returns a reason wins, and the decision names it."""
        first = await self._fold("should_stop_after_turn", (ctx, turn))
        return None if first is None else StopDecision(first[1], first[0])

    async def run_before_turn(self, ctx: RunContext, info: TurnInfo) -> list[Message]:
        """Every one's messages, concatenated in order."""
        return [m for _, out in await self._fold("before_turn", (ctx, info)) for m in out]

    def run_transform(
        self, ctx: RunContext, transcript: list[Message]
    ) -> Coroutine[object, None, list[Message]]:
        """A pipeline in order; each sees the transcript the previous returned.

        The first hook gets a copy: a hook that trims its list in place cannot touch the run's
        own transcript (the one checkpoints save).
        """
        return self._fold("transform", (ctx, list(transcript)))

    async def _fold(self, name: str, args: tuple[object, ...]) -> Any:
        """Call one field's implementations in order and combine what they return.

        The one loop every fold runs: call with the declared arguments, attribute a raise,
        report a slow synchronous call, await (under the deadline) what is awaitable, check
        the return against the field's rule, then chain, stop at the first, or collect. A
        chain hook that hands back the value it was given changes nothing: it is not checked.
        One clock read per call: each call is timed from the end of the one before in
        wall-clock time; only one that took longer than ``slow`` has its CPU time asked for
        (see :meth:`_held_loop` and :data:`DEFAULT_SLOW`).
        """
        plans, rule, kind, slot, types, check, copy, unchecked = self._folds[name]
        found: list[tuple[str, object]] | None = None  # made for the first return kept
        chained = args[slot]  # what a chain hands on, put into args when it changes
        if plans:
            same = chained if unchecked else _NO  # a hook may hand it back unchecked
            slow = self.slow
            mark = perf_counter()
            if mark > _cpu_fresh_until:
                _read_cpu(mark)
            for plan in plans:
                try:
                    out: Any = plan.call(*args)
                except PASSED_THROUGH:
                    raise
                except (Exception, SystemExit) as exc:
                    raise _raised(plan, rule, exc) from exc
                now = perf_counter()  # an async def has only made its coroutine so far
                if now - mark > slow:  # CPU time never exceeds wall-clock time
                    self._held_loop(plan, rule, args[0], mark, now - mark)
                    now = perf_counter()
                mark = now
                if out is None or out is same:
                    continue
                awaitable = _AWAITABLE.get(type(out))
                if awaitable or (awaitable is None and _awaitable(out)):
                    out = await self._await(plan, rule, out, args[0], now)
                    mark = _restart()
                    if out is None or out is same:
                        continue
                if not isinstance(out, types) or (check is not None and not check(out)):
                    raise _refused(plan, rule, out)
                if kind == "chain":
                    if not copy:
                        same = out
                    elif isinstance(out, _LIST):  # always: a copied return is a list or tuple
                        out = list(out)
                    chained = out
                    args = (*args[:slot], out, *args[slot + 1 :])
                elif found is None:
                    found = [(plan.source, out)]
                    if kind == "first":
                        break
                else:
                    found.append((plan.source, out))
        if kind == "chain":
            return chained
        if kind == "all":
            return found or []
        return found and found[0]

    async def _await(
        self, plan: _Plan, rule: _Rule, pending: Awaitable[object], ctx: object, start: float
    ) -> object:
        """What an async hook returns, under the deadline; what it raises, attributed."""
        try:
            if self.timeout is None:
                return await pending
            done, out = await _within(pending, self.timeout)
        except PASSED_THROUGH:
            raise
        except (Exception, SystemExit) as exc:
            raise _raised(plan, rule, exc) from exc
        if done:
            return out
        message = (
            f"{_where(plan, rule)} did not return within {self.timeout:g} s and was cancelled; "
            "make it faster, or give hooks more time: dataclasses.replace(hooks, timeout=...)"
        )
        _span(ctx, plan, rule, start, timeout=self.timeout).error = message
        raise HookTimeoutError(message, plugin=plan.source, hook=rule.hook)

    def _held_loop(self, plan: _Plan, rule: _Rule, ctx: object, start: float, held: float) -> None:
        """Report a synchronous call that held the loop ``held`` s from ``start``, if it was slow.

        Its CPU time is the thread's CPU clock now less its last reading, less the wall-clock
        time from that reading to ``start`` (the most CPU that time can hold): never more than
        the call's own, so a machine crowded by other processes does not make it look slow.
        A long hold with little CPU counts only if the thread waited meanwhile (where the
        platform counts waits): a crowded CPU leaves it runnable, not waiting.
        The clock is read again for the calls that follow.
        """
        cpu_now, waits_now = _cpu_reading()
        cpu_then, waits_then, wall_then = _cpu_marks.get(get_ident(), _NEVER_READ)
        cpu = max(cpu_now - cpu_then - (start - wall_then), 0.0)
        _read_cpu(perf_counter())
        waited = waits_now < 0 or waits_now > waits_then
        if cpu <= self.slow and (held <= self.slow * BLOCKED_FACTOR or not waited):
            return
        _span(ctx, plan, rule, start, slow=self.slow, held=held, cpu=cpu)
        if cpu > self.slow:
            how = f"computed on the event loop for more than {self.slow:g} s of CPU time"
        else:
            how = f"held the event loop for more than {self.slow * BLOCKED_FACTOR:g} s, waiting"
        # The text names no measured duration, so the default warnings filter shows it once
        # per hook; each call's time is on its span.
        warnings.warn(
            f"{_where(plan, rule)} {how} (the 'hook' span on the run's trace has the time): a "
            "synchronous hook runs on the event loop and must be fast; make it async def and "
            "await the slow work (asyncio.to_thread for blocking calls)",
            SlowHookWarning,
            stacklevel=2,
        )
