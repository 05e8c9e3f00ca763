"""The built-in middlewares every invoker starts with: tracing and metering."""

from __future__ import annotations

from ._middleware import CallModel
from ._middleware import CallTool
from ._middleware import Middleware
from ._middleware import ToolInvocation
from ._models import ModelRequest
from ._models import ModelResponse
from ._tools import ToolResult
from ._tracing import Span


class _Tracing(Middleware):
    """A span per model call (``model_call``) and per tool call (``tool_call``)."""

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        ctx = request.ctx
        if ctx is None:
            return await call_next(request)
        with ctx.trace.span("model_call", messages=len(request.messages)) as span:
            response = await call_next(request)
            _stamp(span, response)
            return response

    async def wrap_tool(self, invocation: ToolInvocation, call_next: CallTool) -> ToolResult:
        with invocation.ctx.trace.span(
            "tool_call", tool=invocation.tool.name, call_id=invocation.call.id
        ) as span:
            result = await call_next(invocation)
            span.set("is_error", result.is_error)
            return result


def _stamp(span: Span, response: ModelResponse) -> None:
    span.set("model", response.model)
    span.set("input_tokens", response.usage.input_tokens)
    span.set("output_tokens", response.usage.output_tokens)
    span.set("finish_reason", response.finish_reason)


class _Metering(Middleware):
    """Adds each response's usage to the run and enforces the run's budget."""

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        response = await call_next(request)
        if request.ctx is not None:
            request.ctx.add_usage(response.usage)
        return response


def tracing() -> Middleware:
    """A span per model call and per tool call, in ``ctx.trace``."""
    return _Tracing()


def metering() -> Middleware:
    """Usage of every model call added to ``ctx.usage``; the budget checked after each."""
    return _Metering()


def default_middlewares() -> list[Middleware]:
    """The chain an invoker gets when none is given: tracing outermost, then metering."""
    return [tracing(), metering()]
