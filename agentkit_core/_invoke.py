"""The built-in middlewares every invoker starts with: tracing and metering."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from ._errors import ProviderError
from ._middleware import CallModel
from ._middleware import CallTool
from ._middleware import Middleware
from ._middleware import ToolInvocation
from ._models import ModelRequest
from ._models import ModelResponse
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
            _stamp(span, response)
            payload["response"] = response.message
        except BaseException as exc:
            trace._exit(span, token, exc)
            raise
        else:
            trace._exit(span, token, None)
        finally:
            # the exporters have read it (on_end); a span the run keeps holds no transcript,
            # or a run's memory would grow with the square of its turns
            del payload["request"]
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
        except BaseException as exc:
            trace._exit(span, token, exc)
            raise
        trace._exit(span, token, None)
        return result


def _size(content: str | tuple[dict[str, Any], ...]) -> int:
    """Characters of a result's text (its text parts, for content parts)."""
    if isinstance(content, str):
        return len(content)
    return sum(len(str(part.get("text", ""))) for part in content)


def _stamp(span: Span, response: ModelResponse) -> None:
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


class _Metering(Middleware):
    """Adds each response's usage to the run and enforces the run's budget."""

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        response = await call_next(request)
        if request.ctx is not None:
            request.ctx.add_usage(response.usage)
        return response


class _Retry(Middleware):
    """Calls the model again after a retryable ProviderError, with capped, jittered backoff.

    Each wait is drawn uniformly from zero to ``min(max_delay, base_delay * 2**(n-1))`` before
    attempt ``n + 1`` ("full jitter"): many workers failing together spread their retries over
    the window instead of hitting the provider again in lockstep. A provider's ``retry_after``
    (from a 429's Retry-After) wins: it is waited in full, no jitter. One longer than
    ``max_delay`` is not shortened (the server would refuse the early attempt too) but ends
    the call at once with an error saying so. Errors that are not retryable, and the last
    attempt's error, go to the caller.
    """

    def __init__(
        self, attempts: int, base_delay: float, max_delay: float, rng: random.Random
    ) -> None:
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.rng = rng

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        if retry_after is not None:
            return retry_after
        return self.rng.uniform(0.0, min(self.base_delay * 2 ** (attempt - 1), self.max_delay))

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        for attempt in range(1, self.attempts + 1):
            try:
                return await call_next(request)
            except ProviderError as exc:
                if not exc.retryable or attempt == self.attempts:
                    raise
                if exc.retry_after is not None and exc.retry_after > self.max_delay:
                    raise ProviderError(
                        f"{exc} -- the provider asked to wait {exc.retry_after:g} s before "
                        f"the next attempt, longer than retry(max_delay={self.max_delay:g}); "
                        "giving up now rather than waiting. Raise max_delay= to wait "
                        "that long",
                        retry_after=exc.retry_after,
                    ) from exc
                current_span().set("retries", attempt)
                await asyncio.sleep(self.delay(attempt, exc.retry_after))
        raise AssertionError("unreachable")  # the loop returns or raises


def retry(
    attempts: int = 3,
    *,
    base_delay: float = 0.5,
    max_delay: float = 20.0,
    rng: random.Random | None = None,
) -> Middleware:
    """Retry retryable provider errors up to ``attempts`` calls in all, backing off between.

    The wait before retry ``n`` is drawn uniformly from zero up to ``base_delay * 2**(n-1)``,
    capped at ``max_delay`` (full jitter); ``rng`` draws it (a seeded ``random.Random`` makes
    the waits repeatable; default: a fresh one per middleware). A provider's ``retry_after``
    is waited instead, in full. ``max_delay`` is also the cap on what a provider may ask: a
    Retry-After longer than it gives up at once with a :class:`ProviderError` naming both.
    """
    if attempts < 1:
        from ._errors import ConfigError

        raise ConfigError(f"retry(attempts={attempts}) must allow at least one attempt")
    return _Retry(attempts, base_delay, max_delay, rng if rng is not None else random.Random())


def tracing() -> Middleware:
    """A span per model call and per tool call, in ``ctx.trace``."""
    return _Tracing()


def metering() -> Middleware:
    """Usage of every model call added to ``ctx.usage``; the budget checked after each."""
    return _Metering()


def default_middlewares() -> list[Middleware]:
    """The chain an invoker gets when none is given: tracing, metering, then retry.

    Retry sits inside metering, so a failed attempt is not metered and each retry is inside
    the call's span.
    """
    return [tracing(), metering(), retry()]
