"""OpenAIModel: the Chat Completions API of OpenAI and of servers that speak it, over httpx.

Retries live in one place, the core ``retry()`` middleware every agent runs: this model never
retries by itself. It raises :class:`~agentkit_core.ProviderHTTPError` with ``retryable`` set
for 408, 409, 429 and 5xx answers and ``retry_after`` taken from the ``Retry-After`` (or
``retry-after-ms``) header, and a retryable :class:`~agentkit_core.ProviderError` for timeouts
and dropped connections; the middleware waits at least ``retry_after`` before the next attempt,
and gives up at once when that is longer than its cap (``retry(max_delay=...)``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ModelRequest
from agentkit_core import ModelResponse
from agentkit_core import ProviderError
from agentkit_core import ProviderHTTPError
from agentkit_core import ProviderResponseError
from agentkit_core import StreamEvent
from agentkit_core import ToolCall
from agentkit_core import Usage

from ._wire import message_from_openai
from ._wire import messages_to_openai
from ._wire import usage_from_openai

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: HTTP statuses worth another attempt: timeouts, conflicts, rate limits and server errors.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
_CLIENT_SETTINGS = frozenset({"timeout"})


class OpenAIModel:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` and ``api_key`` default to ``$OPENAI_BASE_URL`` (else the OpenAI API) and
    ``$OPENAI_API_KEY`` (none is fine for a local server). ``timeout`` bounds each network
    wait in seconds (a request may override it with ``settings={"timeout": ...}``; the other
    settings go into the request body). ``structured_output=False`` is for servers without
    ``response_format`` JSON Schema support: the agent then puts the schema in the prompt.

    Used as ``async with model:`` it keeps one connection pool open for the block; otherwise
    each call opens and closes its own. A ``client`` passed in is used as is and never closed.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        structured_output: bool = True,
        headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not model:
            raise ConfigError("the openai model needs a model name, as in 'openai:gpt-4o-mini'")
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
        self.name = f"openai:{model}"
        self.url = f"{base}/chat/completions"
        self.timeout = timeout
        self.supports_structured_output = structured_output
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.headers = {"Accept": "application/json", **(headers or {})}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"
        self._client = client
        self._owned: httpx.AsyncClient | None = None
        self._depth = 0

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, url={self.url!r})"

    # ------------------------------------------------------------------ connections

    async def __aenter__(self) -> OpenAIModel:
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

    # ------------------------------------------------------------------ the wire

    def body(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The JSON body for ``request``: the Chat Completions wire format."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages_to_openai(request.messages),
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        **({"description": t.description} if t.description else {}),
                        "parameters": t.parameters,
                    },
                }
                for t in request.tools
            ]
        if request.output is not None and self.supports_structured_output:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.output.name,
                    "schema": request.output.schema,
                    "strict": request.output.strict,
                },
            }
        body.update((k, v) for k, v in request.settings.items() if k not in _CLIENT_SETTINGS)
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _timeout(self, request: ModelRequest) -> float:
        value = request.settings.get("timeout", self.timeout)
        if not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError(
                f"settings['timeout'] must be a positive number of seconds, got {value!r}",
                value=value,
                source="ModelRequest.settings",
            )
        return float(value)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send ``request`` and return the whole answer."""
        import httpx

        timeout = self._timeout(request)
        try:
            async with self._connection() as client:
                response = await client.post(
                    self.url, json=self.body(request), headers=self.headers, timeout=timeout
                )
        except httpx.TransportError as exc:
            raise self._transport_error(exc, timeout) from exc
        if response.status_code >= 400:
            raise self._http_error(response)
        try:
            data = json.loads(response.text)
        except ValueError as exc:
            raise ProviderResponseError(
                f"{self.name}: the answer from {self.url} is not JSON ({exc}): "
                f"{response.text[:200]!r}"
            ) from exc
        return self._parse(data)

    def _parse(self, data: Any) -> ModelResponse:
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            error = _provider_message(data)
            raise ProviderResponseError(
                f"{self.name}: the answer from {self.url} has no choices"
                + (f": {error}" if error else f": {json.dumps(data)[:200]}")
            )
        choice = choices[0]
        try:
            message = choice.get("message") or {}
            check_tool_calls(message.get("tool_calls"), "choices[0].message.tool_calls")
            return ModelResponse(
                message=message_from_openai(message, response=True),
                usage=usage_from_openai(data.get("usage")),
                finish_reason=choice.get("finish_reason"),
                model=data.get("model") or self.model,
            )
        except (AttributeError, TypeError, ValueError) as exc:
            raise ProviderResponseError(
                f"{self.name}: the answer from {self.url} is malformed ({exc}): "
                f"{json.dumps(data)[:200]}"
            ) from exc

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` with ``stream=true`` and yield its events as they arrive.

        Text deltas come as they arrive; tool calls, whose arguments stream in pieces, come
        complete once the stream has ended with ``[DONE]``. A stream that ends early or drops
        raises instead of returning a partial answer.
        """
        import httpx

        timeout = self._timeout(request)
        body = self.body(request, stream=True)
        state = _StreamState()
        try:
            async with self._connection() as client:
                async with client.stream(
                    "POST", self.url, json=body, headers=self.headers, timeout=timeout
                ) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        raise self._http_error(response)
                    async for data in _sse_data(response.aiter_lines()):
                        if data == "[DONE]":
                            state.done = True
                            break
                        text = self._feed(state, data)
                        if text:
                            yield StreamEvent("text", text=text)
        except httpx.TransportError as exc:
            raise self._transport_error(exc, timeout, state.events) from exc
        if not state.done:
            raise ProviderResponseError(
                f"{self.name}: the stream from {self.url} ended after {state.events} events "
                "without [DONE]; the answer is incomplete",
                retryable=True,
            )
        response_ = state.response(self)
        for call in response_.message.tool_calls:
            yield StreamEvent("tool_call", tool_call=call)
        yield StreamEvent("done", response=response_)

    def _feed(self, state: _StreamState, data: str) -> str:
        """One stream event's data into ``state``; its text delta."""
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise ProviderResponseError(
                f"{self.name}: a stream event from {self.url} is not JSON ({exc}): {data[:200]!r}"
            ) from exc
        if not isinstance(chunk, dict):
            raise ProviderResponseError(
                f"{self.name}: a stream event from {self.url} is not an object: {data[:200]!r}"
            )
        if chunk.get("error"):
            raise ProviderError(
                f"{self.name}: the provider reported an error mid-stream: "
                f"{_provider_message(chunk)}"
            )
        try:
            return state.feed(chunk)
        except (AttributeError, TypeError, ValueError) as exc:
            raise ProviderResponseError(
                f"{self.name}: a stream event from {self.url} is malformed ({exc}): {data[:200]!r}"
            ) from exc

    # ------------------------------------------------------------------ errors

    def _http_error(self, response: httpx.Response) -> ProviderHTTPError:
        status = response.status_code
        try:
            provider_message = _provider_message(json.loads(response.text))
        except ValueError:
            provider_message = ""
        provider_message = provider_message or response.text.strip()[:500] or response.reason_phrase
        hint = {
            401: " (check OPENAI_API_KEY or api_key=)",
            403: " (check the API key's permissions)",
            404: " (check the model name and OPENAI_BASE_URL)",
        }.get(status, "")
        return ProviderHTTPError(
            f"{self.name}: HTTP {status} from {self.url}: {provider_message}{hint}",
            status=status,
            provider_message=provider_message,
            retryable=status in RETRYABLE_STATUSES or status >= 500,
            retry_after=retry_after(response.headers),
        )

    def _transport_error(self, exc: Exception, timeout: float, events: int = 0) -> ProviderError:
        """A retryable error for a failed connection; ``events`` streamed before it failed."""
        import httpx

        if isinstance(exc, httpx.TimeoutException):
            what = f"no answer within {timeout:g}s ({type(exc).__name__})"
        else:
            what = f"{type(exc).__name__}: {exc}"
        if events:
            return ProviderError(
                f"{self.name}: the connection to {self.url} dropped mid-stream after {events} "
                f"events ({what}); the answer is incomplete",
                retryable=True,
            )
        return ProviderError(f"{self.name}: request to {self.url} failed: {what}", retryable=True)


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


#: How a wrong JSON value is named in errors.
_JSON_KINDS = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def check_tool_calls(calls: Any, where: str, *, whole: bool = True) -> None:
    """Raise ValueError naming the field when a ``tool_calls`` array breaks the wire format.

    ``where`` names the array (``choices[0].message.tool_calls``). Each call must be an
    object; its ``id``, ``function.name`` and ``function.arguments`` (the arguments as JSON
    *text*) strings when present, and in a ``whole`` message (not a stream's delta) the
    function and its name must be there. Checked before any message is built, so a provider
    that sends arguments as an object or a number fails here, naming the field, and not later
    in the loop.
    """
    if calls is None:
        return
    if not isinstance(calls, list):
        raise ValueError(f"{where} is {_kind(calls)}, expected an array of tool calls")
    for i, call in enumerate(calls):
        at = f"{where}[{i}]"
        if not isinstance(call, dict):
            raise ValueError(f"{at} is {_kind(call)}, expected an object")
        function = call.get("function")
        fields = [("id", call.get("id"))]
        if function is not None:
            if not isinstance(function, dict):
                raise ValueError(f"{at}.function is {_kind(function)}, expected an object")
            fields += [(f"function.{k}", function.get(k)) for k in ("name", "arguments")]
        for name, value in fields:
            if value is not None and not isinstance(value, str):
                what = "the arguments as JSON text" if name.endswith("arguments") else "a string"
                raise ValueError(f"{at}.{name} is {_kind(value)}, expected {what}")
        if whole and not (function or {}).get("name"):
            raise ValueError(f"{at} has no {'function' if function is None else 'function.name'}")


def _kind(value: Any) -> str:
    return _JSON_KINDS.get(type(value), "a number" if isinstance(value, (int, float)) else "null")


def _provider_message(data: Any) -> str:
    """The error text of an error body: ``{"error": {"message"}}``, ``{"error": "..."}``."""
    if not isinstance(data, dict):
        return ""
    error = data.get("error", data.get("detail"))
    if isinstance(error, dict):
        return str(error.get("message") or json.dumps(error))
    return str(error) if error else ""


async def _sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
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


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _StreamState:
    """A streamed answer being assembled: text, tool calls by index, usage, finish reason."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str | None = None
    events: int = 0
    done: bool = False

    def feed(self, chunk: dict[str, Any]) -> str:
        """Take one chunk in; return its text delta."""
        self.events += 1
        self.model = chunk.get("model") or self.model
        if chunk.get("usage"):
            self.usage = usage_from_openai(chunk["usage"])
        text = ""
        for i, choice in enumerate(chunk.get("choices") or ()):
            if choice.get("index", 0) != 0:
                continue
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            delta = choice.get("delta") or {}
            text = delta.get("content") or ""
            calls = delta.get("tool_calls")
            where = f"stream event {self.events}: choices[{i}].delta.tool_calls"
            check_tool_calls(calls, where, whole=False)
            for tc in calls or ():
                self._call_delta(tc)
        if text:
            self.text.append(text)
        return text

    def _call_delta(self, tc: dict[str, Any]) -> None:
        index = tc.get("index")
        if index is None:  # servers that send each call whole, without an index
            index = len(self.calls) if tc.get("id") or not self.calls else max(self.calls)
        call = self.calls.setdefault(index, _Call())
        call.id = tc.get("id") or call.id
        function = tc.get("function") or {}
        call.name += function.get("name") or ""
        call.arguments.append(function.get("arguments") or "")

    def response(self, model: OpenAIModel) -> ModelResponse:
        calls = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call.name:
                raise ProviderResponseError(
                    f"{model.name}: the streamed tool call at index {index} from {model.url} "
                    "has no function name"
                )
            calls.append(
                ToolCall(call.id or f"call_{index}", call.name, "".join(call.arguments) or "{}")
            )
        return ModelResponse(
            message=Message.assistant("".join(self.text), calls),
            usage=self.usage or Usage(requests=1),
            finish_reason=self.finish_reason,
            model=self.model or model.model,
        )
