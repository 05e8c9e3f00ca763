"""What every provider plugin reads the same way: a request's timeout, an answer's Retry-After."""

from __future__ import annotations

import email.utils
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ProviderHTTPError

wait = ProviderHTTPError.retry_after_of


@given(seconds=st.floats(0, 10**6, allow_nan=False), millis=st.integers(0, 10**9))
def test_milliseconds_win_over_seconds_and_neither_is_negative(seconds: float, millis: int) -> None:
    assert wait({"retry-after": repr(seconds)}) == seconds
    assert wait({"retry-after-ms": str(millis), "retry-after": "9"}) == millis / 1000
    assert wait({"retry-after": "-5"}) == 0.0


def test_an_http_date_and_garbage() -> None:
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < (wait({"retry-after": soon}) or 0) <= 30
    assert wait({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert wait({"retry-after": "soon"}) is None
    assert wait({"retry-after-ms": "x"}) is None and wait({}) is None
    # "nan" is no wait at all, not a retry at once; milliseconds saying nothing leave seconds
    assert wait({"retry-after": "nan"}) is None and wait({"retry-after-ms": "NaN"}) is None
    assert wait({"retry-after-ms": "nan", "retry-after": "7"}) == 7.0


def test_a_requests_timeout_is_its_setting_else_the_providers() -> None:
    bare = ModelRequest((Message.user("hi"),))
    assert bare.timeout(60) == 60.0
    assert ModelRequest((Message.user("hi"),), settings=ModelSettings(timeout=5)).timeout(60) == 5.0


@pytest.mark.parametrize("value", [0, -1, True, "5"])
def test_a_timeout_that_is_not_a_positive_number_is_refused(value: object) -> None:
    request = ModelRequest((Message.user("hi"),), settings=ModelSettings(timeout=value))  # type: ignore[typeddict-item]
    with pytest.raises(ConfigError, match=r"settings\['timeout'\] must be a positive number"):
        request.timeout(60)
