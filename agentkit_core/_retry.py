"""Retries of one model: capped, fully jittered backoff, and a deadline over all its attempts.

The invoker's ``retry()`` middleware and each model of a fallback chain use the same policy.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._deadline import within
from ._errors import ConfigError
from ._errors import ProviderError
from ._middleware import CallModel
from ._middleware import Middleware
from ._models import ModelRequest
from ._models import ModelResponse
from ._models import StreamEvent
from ._tracing import current_span

if TYPE_CHECKING:
    import random


class RetryMiddleware(Middleware):
    """Calls the model again after a retryable ProviderError, with capped, jittered backoff.

    Each wait is drawn uniformly from zero to ``min(max_delay, base_delay * 2**(n-1))`` before
    attempt ``n + 1`` ("full jitter"): many workers failing together spread their retries over
    the window instead of hitting the provider again in lockstep. A provider's ``retry_after``
    (from a 429's Retry-After) wins: it is waited in full, no jitter. One longer than
    ``max_delay`` is not shortened (the server would refuse the early attempt too) but ends
    the call at once with an error saying so. Errors that are not retryable, and the last
    attempt's error, go to the caller. ``deadline`` bounds all the attempts and their waits
    together (seconds; None for none): past it the call fails with a retryable
    :class:`ProviderError`, so a fallback chain moves on to its next model.
    """

    def __init__(
        self,
        attempts: int,
        base_delay: float,
        max_delay: float,
        rng: random.Random | None,
        deadline: float | None = None,
    ) -> None:
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.rng = rng
        self.deadline = deadline

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        if retry_after is not None:
            return retry_after
        if self.rng is None:  # drawn at the first wait: a run that never retries needs none
            import random

            self.rng = random.Random()
        return self.rng.uniform(0.0, min(self.base_delay * 2 ** (attempt - 1), self.max_delay))

    async def backoff(self, attempt: int, exc: ProviderError, request: ModelRequest) -> None:
        """Wait before the attempt after ``attempt`` failed with ``exc``; raise if there is none.

        The wait is the run's ``retry`` event, for whoever streams its events.
        """
        if not exc.retryable or attempt >= self.attempts:
            raise exc
        if exc.retry_after is not None and exc.retry_after > self.max_delay:
            raise ProviderError(
                f"{exc} -- the provider asked to wait {exc.retry_after:g} s before "
                f"the next attempt, longer than retry(max_delay={self.max_delay:g}); "
                "giving up now rather than waiting. Raise max_delay= to wait "
                "that long",
                retry_after=exc.retry_after,
            ) from exc
        current_span().set("retries", attempt)
        wait = self.delay(attempt, exc.retry_after)
        ctx = request.ctx
        if ctx is not None and ctx.trace.events is not None:
            from ._events import Retry  # built only for a run whose events are streamed

            ctx.trace.events.emit(Retry, ctx.run_id, attempt=attempt, error=str(exc), wait=wait)
        await asyncio.sleep(wait)

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        if self.deadline is None:  # the default chain's retry: no layer for the attempts
            try:
                return await call_next(request)
            except ProviderError as exc:
                await self.backoff(1, exc, request)
            return await self._attempts(request, call_next, 2)
        try:
            return await within(self._attempts(request, call_next), self.deadline)
        except TimeoutError:
            raise self._overdue() from None

    async def _attempts(
        self, request: ModelRequest, call_next: CallModel, attempt: int = 1
    ) -> ModelResponse:
        """Attempt ``attempt`` and those after it, until one answers or the backoff raises."""
        while True:
            try:
                return await call_next(request)
            except ProviderError as exc:
                await self.backoff(attempt, exc, request)
            attempt += 1

    def _overdue(self) -> ProviderError:
        return ProviderError(
            f"no answer within retry(deadline={self.deadline:g}) s, this model's deadline "
            "over all its attempts",
            retryable=True,
        )

    async def stream(
        self,
        request: ModelRequest,
        open_stream: Callable[[ModelRequest], AsyncIterator[StreamEvent]],
    ) -> AsyncIterator[StreamEvent]:
        """The model's stream, attempted again after a retryable error before its first event.

        Once an event reached the caller, an error goes to the caller: it has seen the start of
        an answer a new attempt would not continue. The deadline covers the whole stream.
        """
        loop = asyncio.get_running_loop()
        due = None if self.deadline is None else loop.time() + self.deadline
        attempt = 1
        while True:
            events = aiter(open_stream(request))
            started = False
            try:
                while True:
                    wait = None if due is None else due - loop.time()
                    if wait is not None and wait <= 0:
                        raise self._overdue()
                    try:
                        step = anext(events)
                        event = await (step if wait is None else within(step, wait))
                    except StopAsyncIteration:
                        return
                    except TimeoutError:
                        raise self._overdue() from None
                    started = True
                    yield event
            except ProviderError as exc:
                if started:
                    raise
                await self.backoff(attempt, exc, request)
            attempt += 1


def retry(
    attempts: int = 3,
    *,
    base_delay: float = 0.5,
    max_delay: float = 20.0,
    rng: random.Random | None = None,
    deadline: float | None = None,
) -> Middleware:
    """Retry retryable provider errors up to ``attempts`` calls in all, backing off between.

    The wait before retry ``n`` is drawn uniformly from zero up to ``base_delay * 2**(n-1)``,
    capped at ``max_delay`` (full jitter); ``rng`` draws it (a seeded ``random.Random`` makes
    the waits repeatable; default: a fresh one per middleware). A provider's ``retry_after``
    is waited instead, in full. ``max_delay`` is also the cap on what a provider may ask: a
    Retry-After longer than it gives up at once with a :class:`ProviderError` naming both.
    ``deadline`` (seconds, None for none) bounds the attempts and waits together: past it the
    call fails with a retryable :class:`ProviderError` (a fallback chain's next model takes
    over; the invoker's own ``model_deadline`` still bounds the whole call).
    """
    if attempts < 1:
        raise ConfigError(f"retry(attempts={attempts}) must allow at least one attempt")
    if deadline is not None and (
        isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or deadline <= 0
    ):
        raise ConfigError(
            f"retry(deadline={deadline!r}) must be a positive number of seconds, or None",
            value=deadline,
            source="retry(deadline=)",
        )
    return RetryMiddleware(attempts, base_delay, max_delay, rng, deadline)
