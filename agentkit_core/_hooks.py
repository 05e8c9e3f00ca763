"""Contested fields: the hook chains of a run and the rule that folds each one.

A contested field is a place several layers want to set. :class:`Hooks` holds, per field, the
implementations in call order, each with the name of whoever contributed it (a plugin, or
``"user"``), and folds them with the field's rule. The loop calls only these fold methods, so a
plugin's hook and a user's hook are the same thing to it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import GeneratorType
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from ._messages import Message
from ._messages import ToolCall
from ._models import ModelRequest
from ._models import ModelResponse
from ._tools import ToolResult

if TYPE_CHECKING:
    from ._context import RunContext
    from ._plugins import PluginManager

#: One implementation: who contributed it, and the function.
HookImpl = tuple[str, Callable[..., Any]]

FIELDS: tuple[str, ...] = (
    "before_model_call",
    "before_tool_call",
    "after_tool_call",
    "output_guard",
    "should_stop_after_turn",
    "before_turn",
    "transform",
)

_DECISION_RANK = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True, slots=True)
class ToolDecision:
    """A before_tool_call verdict: ``allow``, ``ask`` (a person approves) or ``deny``."""

    kind: Literal["allow", "ask", "deny"]
    reason: str = ""
    source: str = ""

    @classmethod
    def allow(cls, reason: str = "") -> ToolDecision:
        return cls("allow", reason)

    @classmethod
    def ask(cls, reason: str = "") -> ToolDecision:
        return cls("ask", reason)

    @classmethod
    def deny(cls, reason: str = "") -> ToolDecision:
        return cls("deny", reason)


@dataclass(frozen=True, slots=True)
class StopDecision:
    """Why a run stopped after a turn, and which hook said so."""

    reason: str
    source: str


@dataclass(frozen=True, slots=True)
class TurnInfo:
    """What the turn hooks receive: the turn number (from 1); after a turn, what it did."""

    turn: int
    response: ModelResponse | None = None
    tool_results: tuple[ToolResult, ...] = ()


_AWAITABLE: dict[type, bool] = {}


def _awaitable(value: Any) -> bool:
    """Whether a hook's result must be awaited; cached per type, because folds are hot."""
    kind = type(value)
    known = _AWAITABLE.get(kind)
    if known is None:
        if isinstance(value, GeneratorType):  # only some generators are awaitable: ask each
            return inspect.isawaitable(value)
        known = _AWAITABLE[kind] = inspect.isawaitable(value)
    return known


@dataclass(frozen=True, slots=True)
class Hooks:
    """The contested-field implementations of a run, per field, in call order.

    Build it from plugins with :meth:`from_plugins`, from your own functions with
    ``Hooks(before_model_call=[("user", fn)])`` or :meth:`of`, and combine with :meth:`merged`
    (the left side's implementations are called first).
    """

    before_model_call: tuple[HookImpl, ...] = ()
    before_tool_call: tuple[HookImpl, ...] = ()
    after_tool_call: tuple[HookImpl, ...] = ()
    output_guard: tuple[HookImpl, ...] = ()
    should_stop_after_turn: tuple[HookImpl, ...] = ()
    before_turn: tuple[HookImpl, ...] = ()
    transform: tuple[HookImpl, ...] = ()
    #: Filled in by ``__post_init__``: whether any field has an implementation.
    empty: bool = field(default=True, init=False, compare=False)

    def __post_init__(self) -> None:
        for name in FIELDS:
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "empty", not any(getattr(self, n) for n in FIELDS))

    @classmethod
    def of(
        cls, source: str = "user", **fns: Callable[..., Any] | Sequence[Callable[..., Any]]
    ) -> Hooks:
        """Hooks from plain functions, all attributed to ``source``: ``Hooks.of(transform=f)``."""
        fields: dict[str, tuple[HookImpl, ...]] = {}
        for name, value in fns.items():
            if name not in FIELDS:
                from ._errors import ConfigError

                raise ConfigError(
                    f"unknown contested field {name!r}; the fields are {', '.join(FIELDS)}",
                    value=name,
                    source="Hooks.of",
                )
            items = value if isinstance(value, Sequence) else [value]
            fields[name] = tuple((source, fn) for fn in items)
        return cls(**fields)

    @classmethod
    def from_plugins(cls, manager: PluginManager | None = None) -> Hooks:
        """Every loaded plugin's contested-field hooks in plugin order (default manager: None)."""
        from ._lookup import manager_or_default

        pm = manager_or_default(manager)
        return cls(**{name: tuple(pm.hook_impls(f"agentkit_{name}")) for name in FIELDS})

    def merged(self, other: Hooks) -> Hooks:
        """Both sets: this one's implementations first, then ``other``'s, per field."""
        return Hooks(**{n: getattr(self, n) + getattr(other, n) for n in FIELDS})

    # -------------------------------------------------------------- the folds

    async def run_before_model_call(self, ctx: RunContext, request: ModelRequest) -> ModelRequest:
        """Each in order, each sees the request the previous left."""
        for _, fn in self.before_model_call:
            out = fn(ctx, request)
            if out is not None and _awaitable(out):
                out = await out
            if out is not None:
                request = out
        return request

    async def run_before_tool_call(self, ctx: RunContext, call: ToolCall) -> ToolDecision:
        """Every one is asked; deny wins over ask over allow; the first of the winning kind."""
        best = ToolDecision("allow", "", "")
        for source, fn in self.before_tool_call:
            out = fn(ctx, call)
            if out is not None and _awaitable(out):
                out = await out
            if out is None:
                continue
            if isinstance(out, str):
                out = ToolDecision(out)  # type: ignore[arg-type]
            if _DECISION_RANK[out.kind] > _DECISION_RANK[best.kind]:
                best = ToolDecision(out.kind, out.reason, source)
        return best

    async def run_after_tool_call(
        self, ctx: RunContext, call: ToolCall, result: ToolResult
    ) -> ToolResult:
        """Each in order may replace the result."""
        for _, fn in self.after_tool_call:
            out = fn(ctx, call, result)
            if out is not None and _awaitable(out):
                out = await out
            if out is not None:
                result = out
        return result

    async def run_output_guard(self, ctx: RunContext, message: Message) -> Message:
        """Each in order sees the message the previous left."""
        for _, fn in self.output_guard:
            out = fn(ctx, message)
            if out is not None and _awaitable(out):
                out = await out
            if out is not None:
                message = out
        return message

    async def run_should_stop_after_turn(
        self, ctx: RunContext, turn: TurnInfo
    ) -> StopDecision | None:
        """The first that returns a reason wins, and the decision names it."""
        for source, fn in self.should_stop_after_turn:
            out = fn(ctx, turn)
            if out is not None and _awaitable(out):
                out = await out
            if out:
                return StopDecision(str(out), source)
        return None

    async def run_before_turn(self, ctx: RunContext, info: TurnInfo) -> list[Message]:
        """Every one's messages, concatenated in order."""
        added: list[Message] = []
        for _, fn in self.before_turn:
            out = fn(ctx, info)
            if out is not None and _awaitable(out):
                out = await out
            if out:
                added.extend(out)
        return added

    async def run_transform(self, ctx: RunContext, transcript: list[Message]) -> list[Message]:
        """A pipeline in order; each sees the transcript the previous returned."""
        for _, fn in self.transform:
            out = fn(ctx, transcript)
            if out is not None and _awaitable(out):
                out = await out
            if out is not None:
                transcript = list(out)
        return transcript
