"""The retry middleware's waits: full jitter under the capped exponential bound, Retry-After wins.

Measured on the waits the middleware draws (a seeded ``random.Random``), not on the clock.
"""

from __future__ import annotations

import random
import statistics

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core._retry import RetryMiddleware
from agentkit_core.plugin import retry


def middleware(base: float, cap: float, seed: int) -> RetryMiddleware:
    made = retry(5, base_delay=base, max_delay=cap, rng=random.Random(seed))
    assert isinstance(made, RetryMiddleware)
    return made


@settings(max_examples=50, deadline=None)
@given(
    base=st.floats(0.001, 5.0),
    cap=st.floats(0.001, 60.0),
    attempt=st.integers(1, 12),
    seed=st.integers(0, 2**32),
)
def test_a_wait_lies_between_zero_and_the_capped_exponential_bound(
    base: float, cap: float, attempt: int, seed: int
) -> None:
    """Property: every wait is in [0, min(cap, base * 2**(attempt-1))]."""
    bound = min(cap, base * 2 ** (attempt - 1))
    waits = [middleware(base, cap, seed).delay(attempt) for _ in range(20)]
    assert all(0.0 <= w <= bound for w in waits)


@settings(max_examples=30, deadline=None)
@given(retry_after=st.floats(0.0, 20.0), attempt=st.integers(1, 5), seed=st.integers(0, 99))
def test_retry_after_is_waited_exactly_without_jitter(
    retry_after: float, attempt: int, seed: int
) -> None:
    assert middleware(0.5, 20.0, seed).delay(attempt, retry_after) == retry_after


def test_concurrent_workers_spread_their_retries_over_the_window() -> None:
    """Workers failing together do not come back together: their waits fill the window."""
    workers = [middleware(0.5, 20.0, seed) for seed in range(400)]
    for attempt, bound in [(1, 0.5), (3, 2.0), (7, 20.0)]:
        waits = [w.delay(attempt) for w in workers]
        assert len(set(waits)) == len(waits)  # no two in lockstep
        assert min(waits) < 0.05 * bound and max(waits) > 0.95 * bound
        # uniform over [0, bound]: mean bound/2, standard deviation bound/sqrt(12)
        assert abs(statistics.mean(waits) - bound / 2) < 0.05 * bound
        assert abs(statistics.stdev(waits) - bound / 12**0.5) < 0.05 * bound


def test_the_same_seed_gives_the_same_waits() -> None:
    one, two = middleware(0.5, 20.0, 7), middleware(0.5, 20.0, 7)
    assert [one.delay(n) for n in range(1, 6)] == [two.delay(n) for n in range(1, 6)]
