"""Middleware: the ordered chains a model call and a tool call pass through.

A middleware wraps model calls, tool calls or both. A plain ``async (request, call_next)``
function is a model-call middleware. The first middleware in a list is the outermost.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

from ._messages import JSONValue
from ._messages import ToolCall
from ._models import ModelRequest
from ._models import ModelResponse
from ._records import record
from ._tools import Tool
from ._tools import ToolResult

if TYPE_CHECKING:
    from ._context import RunContext

A = TypeVar("A")
R = TypeVar("R")

CallModel = Callable[[ModelRequest], Awaitable[ModelResponse]]
CallTool = Callable[["ToolInvocation"], Awaitable[ToolResult]]
ModelMiddlewareFn = Callable[[ModelRequest, CallModel], Awaitable[ModelResponse]]


@record(slots=True)
class ToolInvocation:
    """One tool call on its way to the tool: the model's call, the tool, decoded arguments."""

    call: ToolCall
    tool: Tool
    arguments: dict[str, JSONValue]
    ctx: RunContext
    metadata: dict[str, Any] = field(default_factory=dict)


class Middleware:
    """Base class of middlewares; override either hook, the other passes through.

    ``wrap_model`` receives the request and ``call_next``; it returns the response, calling
    ``call_next`` zero or more times (retry calls it again, a cache not at all).
    ``wrap_tool`` does the same for one tool invocation.
    """

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        return await call_next(request)

    async def wrap_tool(self, invocation: ToolInvocation, call_next: CallTool) -> ToolResult:
        return await call_next(invocation)


class _FunctionMiddleware(Middleware):
    __slots__ = ("fn",)

    def __init__(self, fn: ModelMiddlewareFn) -> None:
        self.fn = fn

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        return await self.fn(request, call_next)

    def __repr__(self) -> str:
        return f"<middleware {getattr(self.fn, '__qualname__', self.fn)!r}>"


MiddlewareLike = Middleware | ModelMiddlewareFn


def as_middleware(mw: MiddlewareLike) -> Middleware:
    """A :class:`Middleware` from a middleware object or a plain model-call function."""
    return mw if isinstance(mw, Middleware) else _FunctionMiddleware(mw)


def chain_model(middlewares: Sequence[Middleware], end: CallModel) -> CallModel:
    """Compose model-call middlewares around ``end``; the first is the outermost.

    Middlewares that do not override ``wrap_model`` are left out of the chain entirely, so a
    tool-only middleware costs nothing per model call.
    """
    call = end
    for mw in reversed(middlewares):
        if type(mw).wrap_model is not Middleware.wrap_model:
            call = _bind(mw.wrap_model, call)
    return call


def chain_tool(middlewares: Sequence[Middleware], end: CallTool) -> CallTool:
    """Compose tool-call middlewares around ``end``; the first is the outermost."""
    call = end
    for mw in reversed(middlewares):
        if type(mw).wrap_tool is not Middleware.wrap_tool:
            call = _bind(mw.wrap_tool, call)
    return call


def _bind(
    wrap: Callable[[A, Callable[[A], Awaitable[R]]], Awaitable[R]], nxt: Callable[[A], Awaitable[R]]
) -> Callable[[A], Awaitable[R]]:
    """``wrap`` with ``nxt`` as its ``call_next``: its awaitable, with no coroutine around it."""

    def call(arg: A) -> Awaitable[R]:
        return wrap(arg, nxt)

    return call
