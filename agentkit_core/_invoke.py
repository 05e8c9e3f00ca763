"""The built-in middlewares every invoker starts with: tracing and metering."""

from __future__ import annotations

from collections.abc import Awaitable

from ._content import content_text
from ._genai import USAGE_NAMES
from ._messages import Content
from ._middleware import CallModel
from ._middleware import CallTool
from ._middleware import Middleware
from ._middleware import ToolInvocation
from ._models import ModelRequest
from ._models import ModelResponse
from ._pricing import run_prices
from ._retry import retry
from ._span_export import AS_IS
from ._span_export import ATTRIBUTE_LIMIT
from ._tools import ToolResult
from ._tracing import Span
from ._tracing import current_span


class _Tracing(Middleware):
    """A span per model call (``model_call``) and per tool call (``tool_call``)."""

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        ctx = request.ctx
        if ctx is None:
            return await call_next(request)
        # trace._enter/_exit rather than ``with trace.span``: the same span, two calls fewer
        payload: dict[str, object] = {"request": request.messages}
        trace = ctx.trace
        span, token = trace._enter("model_call", payload, {"messages": len(request.messages)})
        try:
            response = await call_next(request)
            _stamp(span, response, trace.genai)
            payload["response"] = response.message
        except BaseException as exc:
            trace._exit(span, token, exc)
            raise
        else:
            trace._exit(span, token, None)
        finally:
            # the exporters have read it (on_end); a span the run keeps holds no transcript,
            # or a run's memory would grow with the square of its turns, nor a second dict
            del payload["request"]
            span.genai = None
        return response

    async def wrap_tool(self, invocation: ToolInvocation, call_next: CallTool) -> ToolResult:
        payload: dict[str, object] = {"arguments": invocation.arguments}
        trace = invocation.ctx.trace
        span, token = trace._enter(
            "tool_call", payload, {"tool": invocation.tool.name, "call_id": invocation.call.id}
        )
        try:
            result = await call_next(invocation)
            attributes = span.attributes
            attributes["is_error"] = result.is_error
            attributes["result_chars"] = _size(result.content)
            payload["result"] = result.content
            # the GenAI names made here, not by a function of their own: a call fewer a tool
            # call; only core's attributes, in the order it set them (``result_chars`` an int)
            if trace.genai and tuple(attributes) == _TOOL_CALL_KEYS:
                tool, call_id, is_error, size = attributes.values()
                if (
                    (type(tool), type(call_id), type(is_error)) == _TOOL_CALL_TYPES
                    and len(tool) <= ATTRIBUTE_LIMIT  # type: ignore[arg-type]  # a str, as checked
                    and len(call_id) <= ATTRIBUTE_LIMIT  # type: ignore[arg-type]
                ):
                    span.genai = {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.type": "function",
                        "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": call_id,
                        "agentkit.is_error": is_error,
                        "agentkit.result_chars": size,
                    }
        except BaseException as exc:
            trace._exit(span, token, exc)
            raise
        trace._exit(span, token, None)
        span.genai = None  # read by the exporters (on_end): a span the run keeps needs no copy
        return result


def _size(content: Content) -> int:
    """Characters of a result's text (its text parts, for content parts)."""
    return len(content) if type(content) is str else len(content_text(content))


def _stamp(span: Span, response: ModelResponse, genai: bool) -> None:
    """The call's attributes from its ``response``.

    With ``genai`` (an exporter reads them), their GenAI names too, made here once.
    """
    # item by item, one loop for both lists: half the cost of update(**...) with two map()s
    ids: list[str] = []
    names: list[str] = []
    for call in response.message.tool_calls:
        ids.append(call.id)
        names.append(call.name)
    usage = response.usage
    attributes = span.attributes
    attributes["model"] = response.model
    attributes["input_tokens"] = usage.input_tokens
    attributes["output_tokens"] = usage.output_tokens
    if usage.cache_read_tokens or usage.cache_write_tokens or usage.reasoning_tokens:
        attributes["cache_read_tokens"] = usage.cache_read_tokens
        attributes["cache_write_tokens"] = usage.cache_write_tokens
        attributes["reasoning_tokens"] = usage.reasoning_tokens
    attributes["finish_reason"] = response.finish_reason
    attributes["tool_call_ids"] = ids
    attributes["tool_call_names"] = names
    if not genai:
        return
    # the GenAI names made here, not by a function of their own: a call fewer a model call
    model = response.model
    reason = response.finish_reason
    # the types in one comparison: a third of the bytecodes of a check each
    if (
        type(model),
        type(reason),
        type(attributes.get("messages")),
        type(usage.input_tokens),
        type(usage.output_tokens),
    ) != _MODEL_CALL_TYPES or not attributes.keys() <= _MODEL_CALL_KEYS:
        return
    try:  # texts only (join refuses anything else), all of them within the cap: one join
        # (texts that fit one by one but not together take the general mapping, as exact)
        if len("".join((model, reason, *ids, *names))) > ATTRIBUTE_LIMIT:  # type: ignore[arg-type]
            return
    except TypeError:
        return
    out: dict[str, object] = {
        "gen_ai.operation.name": "chat",
        "agentkit.messages": attributes["messages"],
        "gen_ai.request.model": model,
        "gen_ai.response.model": model,
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.response.finish_reasons": [reason],
        "agentkit.tool_call_ids": ids,
        "agentkit.tool_call_names": names,
    }
    if len(attributes) > 7:  # a provider, a cost, cache and reasoning tokens
        for key, genai_name in _MODEL_CALL_OPTIONAL.items():
            value = attributes.get(key)
            if value is None:
                continue
            if type(value) not in AS_IS and (
                type(value) is not str or len(value) > ATTRIBUTE_LIMIT
            ):
                return
            out[genai_name] = value
    span.genai = out


#: What a model call's attributes may hold for :func:`_stamp`'s GenAI names: what core sets on it.
_MODEL_CALL_KEYS = frozenset(
    {"messages", "model", "finish_reason", "tool_call_ids", "tool_call_names"}
    | {"provider", "cost", *USAGE_NAMES}
)
#: The types of a model call's model, finish reason, messages and token counts it may hold.
_MODEL_CALL_TYPES = (str, str, int, int, int)
_MODEL_CALL_OPTIONAL = {
    "provider": "agentkit.provider",
    "cost": "agentkit.cost",
    **{key: names[0] for key, names in USAGE_NAMES.items() if key[0] in "cr"},
}


#: A tool call's attributes as :class:`_Tracing` sets them, in that order, and their types.
_TOOL_CALL_KEYS = ("tool", "call_id", "is_error", "result_chars")
_TOOL_CALL_TYPES = (str, str, bool)


class _Metering(Middleware):
    """Adds each response's usage and cost to the run and enforces the run's budget.

    Before the call, a run's request and token limits refuse a call they certainly cannot take
    (:meth:`~agentkit_core.RunContext.check_call`); after it, every limit is checked on what
    it used.

    The cost is priced by the model that answered (``response.answered_by``); a tool call is
    counted, against ``Budget(max_tool_calls=)``, before it starts. The prices are the run's
    (its agent's plugin manager's): a run without them has every cost unknown.
    """

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        ctx = request.ctx
        if ctx is not None:
            ctx.check_call(lambda: ctx.sent_tokens(request.messages))
        response = await call_next(request)
        if ctx is not None:
            model = response.answered_by
            cost = None
            if model is not None and ":" in model:  # a bare name ("test") has no price
                known = run_prices(ctx)
                cost = None if known is None else known.cost(response.usage, model)
                if cost is not None:  # on the call's span, which tracing opened around this
                    current_span().attributes["cost"] = cost
            ctx.add_usage(response.usage, model, cost)
        return response

    def wrap_tool(  # type: ignore[override]  # the next awaitable, not a coroutine around it
        self, invocation: ToolInvocation, call_next: CallTool
    ) -> Awaitable[ToolResult]:
        invocation.ctx.add_tool_call(invocation.tool.name)
        return call_next(invocation)


def tracing() -> Middleware:
    """A span per model call and per tool call, in ``ctx.trace``."""
    return _Tracing()


def metering() -> Middleware:
    """Usage of every model call added to ``ctx.usage``; the budget checked before and after."""
    return _Metering()


def default_middlewares() -> list[Middleware]:
    """The chain an invoker gets when none is given: tracing, metering, then retry.

    Retry sits inside metering, so a failed attempt is not metered and each retry is inside
    the call's span.
    """
    return [tracing(), metering(), retry()]
