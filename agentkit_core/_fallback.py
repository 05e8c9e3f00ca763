"""A fallback chain: models tried in order, each with its own retries, for one request.

``FallbackModel([a, b, c])`` is a :class:`~agentkit_core.plugin.Model`: a request goes to ``a``
with ``a``'s retries; when they are spent on an error another model may not have (rate limits,
overload, 5xx, timeouts, lost connections: a retryable :class:`ProviderError`) it goes to ``b``,
and so on. An error every model would give (an invalid request, a content policy refusal, a
prompt past the context window) goes to the caller at once. A stream moves on only while none
of its events reached the caller. Reasoning blocks stay with the model that wrote them: each
provider sends back only the reasoning its own model wrote (``metadata["reasoning"]["model"]``),
so another provider's thinking is dropped from what it is sent, never converted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Sequence
from contextvars import Token
from dataclasses import replace

from ._errors import ConfigError
from ._errors import ProviderError
from ._middleware import Middleware
from ._models import Model
from ._models import ModelRequest
from ._models import ModelResponse
from ._models import StreamEvent
from ._models import answered
from ._pricing import check_cost
from ._retry import RetryMiddleware
from ._retry import retry as make_retry
from ._tracing import Span


def may_differ(exc: ProviderError) -> bool:
    """Whether another model may answer where one failed with ``exc``: the default rule.

    Retryable errors (429, 529 overloaded, 5xx, timeouts, connection errors) may differ from
    model to model; the others (invalid request, content policy, context length) would not.
    """
    return exc.retryable


class FallbackExhausted(ProviderError):
    """Every model of a fallback chain failed; ``errors`` holds each model's last error."""

    def __init__(self, errors: Sequence[tuple[str, ProviderError]]) -> None:
        listed = "; ".join(f"{name}: {exc}" for name, exc in errors)
        super().__init__(f"every model of the fallback chain failed -- {listed}")
        #: ``(model name, its last error)`` for each model tried, in order.
        self.errors = tuple(errors)


class FallbackModel:
    """Models tried in order for each request; see the module's docstring.

    ``retry`` is each model's retry policy (a :func:`~agentkit_core.plugin.retry`; default
    ``retry()``: three attempts, full jitter; its ``deadline=`` bounds one model's attempts).
    ``fall_back_on(error)`` says whether an error moves on to the next model (default
    :func:`may_differ`). Each model tried is a ``model_attempt`` span; the answer's
    ``answered_by`` names the model that gave it. When every model failed, the chain raises
    :class:`FallbackExhausted` listing each model's last error (not retryable: the retries were
    each model's own).
    """

    #: No provider of its own: each attempt's span names its model's.
    provider = ""

    def __init__(
        self,
        models: Sequence[Model],
        *,
        retry: Middleware | None = None,
        fall_back_on: Callable[[ProviderError], bool] = may_differ,
    ) -> None:
        if not models:
            raise ConfigError("FallbackModel needs at least one model", source="FallbackModel")
        policy = make_retry() if retry is None else retry
        if not isinstance(policy, RetryMiddleware):
            raise ConfigError(
                f"FallbackModel(retry={retry!r}) takes a policy made by retry(...)",
                value=retry,
                source="FallbackModel(retry=)",
            )
        self.models = tuple(models)
        self.retry = policy
        self.fall_back_on = fall_back_on
        self.name = "fallback[" + ",".join(m.name for m in self.models) + "]"
        self.supports_structured_output = all(
            getattr(m, "supports_structured_output", False) for m in self.models
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        failures: list[tuple[str, ProviderError]] = []
        for index, model in enumerate(self.models):
            attempt = _Attempt(request, model, index)
            try:
                response = await self.retry.wrap_model(request, model.request)
            except ProviderError as exc:
                attempt.close(exc)
                if not self.fall_back_on(exc):
                    raise
                failures.append((model.name, exc))
                continue
            except BaseException as exc:
                attempt.close(exc)
                raise
            attempt.close(None, response)
            return answered(response, model.name)
        raise FallbackExhausted(failures)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        failures: list[tuple[str, ProviderError]] = []
        for index, model in enumerate(self.models):
            started = False
            attempt = _Attempt(request, model, index)
            try:
                async for event in self.retry.stream(request, model.stream):
                    if event.kind == "done" and event.response is not None:
                        answer = answered(event.response, model.name)
                        event = replace(event, response=answer)
                        attempt.close(None, answer)
                    started = True
                    yield event
            except ProviderError as exc:
                attempt.close(exc)
                if started or not self.fall_back_on(exc):
                    raise
                failures.append((model.name, exc))
                continue
            except BaseException as exc:
                attempt.close(exc)
                raise
            attempt.close(None)
            return
        raise FallbackExhausted(failures)


class _Attempt:
    """One model's turn in the chain: its cost checked, a ``model_attempt`` span (in a run)."""

    __slots__ = ("ctx", "scope")

    def __init__(self, request: ModelRequest, model: Model, index: int) -> None:
        self.ctx = ctx = request.ctx
        self.scope: tuple[Span, Token[Span | None]] | None = None
        if ctx is None:
            return
        check_cost(ctx, model.name, request.messages)
        attributes: dict[str, object] = {"model": model.name, "attempt": index + 1}
        if ":" in model.name:
            attributes["provider"] = model.name.partition(":")[0]
        self.scope = ctx.trace._enter("model_attempt", None, attributes)

    def close(self, exc: BaseException | None, response: ModelResponse | None = None) -> None:
        """End the span (once): with the error, or with the answer's token counts."""
        if self.scope is None or self.ctx is None:
            return
        span, token = self.scope
        self.scope = None
        if response is not None:
            span.attributes["input_tokens"] = response.usage.input_tokens
            span.attributes["output_tokens"] = response.usage.output_tokens
        self.ctx.trace._exit(span, token, exc)
