"""``hide_secret``: an API key a server echoed never shows in a provider error's message, its
fields, or the cause a traceback chains."""

from __future__ import annotations

import traceback

from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import ProviderError
from agentkit_core.plugin import ProviderHTTPError
from agentkit_core.plugin import hide_secret

texts = st.text(st.sampled_from("ab*-: \n\u00e9\u200b"), max_size=20)
secrets = st.text(st.sampled_from("ab*-\u00e9"), min_size=8, max_size=12)


def _shown(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc) + repr(vars(exc))


@given(secrets, texts, texts)
def test_the_secret_shows_nowhere(secret: str, before: str, after: str) -> None:
    text = before + secret + after + secret
    cause = ValueError(f"the SDK quotes the body: {text}")
    error = ProviderHTTPError(f"HTTP 401: {text}", status=401, provider_message=text)
    try:
        raise hide_secret(error, secret, cause)
    except ProviderError as caught:
        assert secret not in _shown(caught)
        assert caught.status == 401


def test_a_cause_without_the_secret_is_kept() -> None:
    cause = ValueError("connection refused")
    error = hide_secret(ProviderError("request failed: connection refused"), "sk-0123456789", cause)
    assert error.__cause__ is cause
    assert "connection refused" in "".join(traceback.format_exception(error))


def test_a_short_or_empty_key_masks_nothing() -> None:
    error = hide_secret(ProviderError("HTTP 401: a bad key"), "")
    assert str(error) == "HTTP 401: a bad key"
    assert str(hide_secret(ProviderError("the key"), "key")) == "the key"
