"""What both of this plugin's models share: the httpx connection, the options, the errors.

:class:`HTTPModel` is the base of :class:`~agentkit_model_openai.OpenAIModel` (Chat Completions)
and :class:`~agentkit_model_openai.OpenAIResponsesModel` (the Responses API): one way to read
``base_url``/``api_key``/``timeout``, one connection pool per ``async with``, one mapping of
HTTP answers and transport failures onto agentkit's provider errors. Neither model retries by
itself; the core ``retry()`` middleware does, reading ``retryable`` and ``retry_after``.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

from agentkit_core import ConfigError
from agentkit_core import ProviderError
from agentkit_core.plugin import ProviderHTTPError
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import hide_secret
from agentkit_core.plugin import mask_url

if TYPE_CHECKING:
    import httpx

    from agentkit_core.plugin import ModelRequest
    from agentkit_core.plugin import ModelResponse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: HTTP statuses worth another attempt besides 5xx: timeouts, conflicts and rate limits.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
_Self = TypeVar("_Self", bound="HTTPModel")


class HTTPModel:
    """A model behind one endpoint (``path`` under the base URL) of an OpenAI-style server.

    ``base_url`` and ``api_key`` default to ``$OPENAI_BASE_URL`` (else the OpenAI API) and
    ``$OPENAI_API_KEY``. ``timeout`` bounds each network wait in seconds. Used as ``async
    with model:`` it keeps one connection pool open for the block; otherwise each call opens
    and closes its own. A ``client`` passed in is used as is and never closed.
    """

    def __init__(
        self,
        prefix: str,
        path: str,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout: float,
        headers: dict[str, str] | None,
        client: httpx.AsyncClient | None,
    ) -> None:
        if not model:
            raise ConfigError(
                f"the {prefix} model needs a model name, as in '{prefix}:gpt-4o-mini'"
            )
        source = "base_url=" if base_url is not None else "$OPENAI_BASE_URL"
        base = base_url if base_url is not None else os.environ.get("OPENAI_BASE_URL", "")
        base = (base or DEFAULT_BASE_URL).rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ConfigError(
                f"{source} {base!r} is not an http(s) URL; set it to the server's API root, "
                "such as http://localhost:11434/v1",
                value=base,
                source=source,
            )
        if not timeout > 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.model = model
        self.name = f"{prefix}:{model}"
        self.base_url = base
        self.url = f"{base}/{path}"
        #: ``url`` as messages show it: a password in it masked (``mask_url``).
        self.where = mask_url(self.url)
        self.timeout = timeout
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.headers = {"Accept": "application/json", **(headers or {})}
        if self.api_key:
            self.headers["Authorization"] = f"Bearer {self.api_key}"
        self._client = client
        self._owned: httpx.AsyncClient | None = None
        self._depth = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, url={self.where!r})"

    # ------------------------------------------------------------------ connections

    async def __aenter__(self: _Self) -> _Self:
        if self._client is None and self._owned is None:
            import httpx

            self._owned = httpx.AsyncClient()
        self._depth += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool opened by ``async with`` (a passed-in client stays open)."""
        owned, self._owned = self._owned, None
        if owned is not None:
            await owned.aclose()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[httpx.AsyncClient]:
        shared = self._client or self._owned
        if shared is not None:
            yield shared
            return
        import httpx

        async with httpx.AsyncClient() as client:
            yield client

    # ------------------------------------------------------------------ errors

    def body(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The JSON body of ``request`` in this API's wire format."""
        raise NotImplementedError

    def _parse(self, data: Any) -> ModelResponse:
        """A whole answer's decoded JSON as a ModelResponse."""
        raise NotImplementedError

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send ``request`` and return the whole answer (one POST; each API parses its own)."""
        import httpx

        timeout = request.timeout(self.timeout)
        try:
            async with self._connection() as client:
                response = await client.post(
                    self.url, json=self.body(request), headers=self.headers, timeout=timeout
                )
        except httpx.TransportError as exc:
            error = self._transport_error(exc, timeout)
            raise error from error.__cause__
        if response.status_code >= 400:
            raise self._http_error(response)
        try:
            data = json.loads(response.text)
        except ValueError as exc:
            error = ProviderResponseError(
                f"{self.name}: the answer from {self.where} is not JSON ({exc}): "
                f"{response.text[:200]!r}"
            )
            raise error from self.hide(error, exc).__cause__  # none when it quotes the key
        try:
            return self._parse(data)
        except ProviderError as exc:  # it quotes the answer, which may echo the key
            self.hide(exc)
            raise

    def hide(self, error: ProviderError, cause: BaseException | None = None) -> ProviderError:
        """``error`` with the API key masked: a server may echo the request's headers."""
        return hide_secret(error, self.api_key, cause)

    def _http_error(self, response: httpx.Response) -> ProviderHTTPError:
        status = response.status_code
        try:
            provider_message = provider_error_text(json.loads(response.text))
        except ValueError:
            provider_message = ""
        provider_message = provider_message or response.text.strip()[:500] or response.reason_phrase
        hint = {
            401: " (check OPENAI_API_KEY or api_key=)",
            403: " (check the API key's permissions)",
            404: " (check the model name and OPENAI_BASE_URL)",
        }.get(status, "")
        error = ProviderHTTPError(
            f"{self.name}: HTTP {status} from {self.where}: {provider_message}{hint}",
            status=status,
            provider_message=provider_message,
            retryable=status in RETRYABLE_STATUSES or status >= 500,
            retry_after=ProviderHTTPError.retry_after_of(response.headers),
        )
        self.hide(error)
        return error

    def _transport_error(self, exc: Exception, timeout: float, events: int = 0) -> ProviderError:
        """A retryable error for a failed connection; ``events`` streamed before it failed."""
        import httpx

        if isinstance(exc, httpx.TimeoutException):
            what = f"no answer within {timeout:g}s ({type(exc).__name__})"
        else:
            what = f"{type(exc).__name__}: {exc}"
        if events:
            return self.hide(
                ProviderError(
                    f"{self.name}: the connection to {self.where} dropped mid-stream after "
                    f"{events} events ({what}); the answer is incomplete",
                    retryable=True,
                ),
                exc,
            )
        failed = f"{self.name}: request to {self.where} failed: {what}"
        return self.hide(ProviderError(failed, retryable=True), exc)


def provider_error_text(data: Any) -> str:
    """The error text of an error body: ``{"error": {"message"}}``, ``{"error": "..."}``."""
    if not isinstance(data, dict):
        return ""
    error = data.get("error", data.get("detail"))
    if isinstance(error, dict):
        return str(error.get("message") or json.dumps(error))
    return str(error) if error else ""


async def sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The ``data`` of each server-sent event (multi-line data joined; comments skipped)."""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)


def repeated_id(ids: list[Any], where: str) -> None:
    """Raise ValueError when two calls of one answer share an id.

    Their results could not be told apart, and a decision on one call (a deny) could be read
    as the other's: a server that sends this is broken, and the answer is refused.
    """
    first: dict[Any, int] = {}
    for i, call_id in enumerate(ids):
        if call_id and call_id in first:
            raise ValueError(
                f"{where}[{i}].id {call_id!r} repeats the id of {where}[{first[call_id]}]; "
                "each call of an answer needs its own id"
            )
        first.setdefault(call_id, i)
