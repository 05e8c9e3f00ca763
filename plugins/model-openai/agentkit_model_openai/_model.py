"""OpenAIModel: the Chat Completions API of OpenAI and of servers that speak it, over httpx.

Retries live in one place, the core ``retry()`` middleware every agent runs: this model never
retries by itself. It raises :class:`~agentkit_core.plugin.ProviderHTTPError` with ``retryable`` set
for 408, 409, 429 and 5xx answers and ``retry_after`` taken from the ``Retry-After`` (or
``retry-after-ms``) header, and a retryable :class:`~agentkit_core.ProviderError` for timeouts
and dropped connections; the middleware waits at least ``retry_after`` before the next attempt,
and gives up at once when that is longer than its cap (``retry(max_delay=...)``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import StreamEvent

from ._http import HTTPModel
from ._http import provider_error_text
from ._http import repeated_id
from ._http import sse_data
from ._wire import message_from_openai
from ._wire import messages_to_openai
from ._wire import settings_to_openai
from ._wire import usage_from_openai

if TYPE_CHECKING:
    import httpx


class OpenAIModel(HTTPModel):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` and ``api_key`` default to ``$OPENAI_BASE_URL`` (else the OpenAI API) and
    ``$OPENAI_API_KEY`` (none is fine for a local server). ``timeout`` bounds each network
    wait in seconds (a request may override it with ``settings={"timeout": ...}``; the other
    :class:`~agentkit_core.ModelSettings` are mapped into the request body by
    :func:`settings_to_openai`). ``max_tokens_field`` is the body field ``max_tokens`` goes in:
    OpenAI's ``max_completion_tokens`` by default, ``"max_tokens"`` for a server that reads
    only the older name. ``structured_output=False`` is for servers without
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
        max_tokens_field: str = "max_completion_tokens",
    ) -> None:
        super().__init__(
            "openai",
            "chat/completions",
            model,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            headers=headers,
            client=client,
        )
        if max_tokens_field not in ("max_completion_tokens", "max_tokens"):
            raise ConfigError(
                f"max_tokens_field must be 'max_completion_tokens' or 'max_tokens', got "
                f"{max_tokens_field!r}",
                value=max_tokens_field,
                source="OpenAIModel(max_tokens_field=)",
            )
        self.max_tokens_field = max_tokens_field
        self.supports_structured_output = structured_output

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
        body.update(
            settings_to_openai(
                request.settings, tools=bool(request.tools), max_tokens_field=self.max_tokens_field
            )
        )
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _parse(self, data: Any) -> ModelResponse:
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            error = provider_error_text(data)
            raise ProviderResponseError(
                f"{self.name}: the answer from {self.where} has no choices"
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
                f"{self.name}: the answer from {self.where} is malformed ({exc}): "
                f"{json.dumps(data)[:200]}"
            ) from exc

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` with ``stream=true`` and yield its events as they arrive.

        Text deltas come as they arrive, and so do a tool call's: a ``"tool_call_delta"`` as
        soon as its id and name are known, then one per fragment of its arguments. Each call
        comes complete once the stream has ended with ``[DONE]``. A stream that ends early or
        drops raises instead of returning a partial answer.
        """
        import httpx

        timeout = request.timeout(self.timeout)
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
                    async for data in sse_data(response.aiter_lines()):
                        if data == "[DONE]":
                            state.done = True
                            break
                        for event in self._feed(state, data):
                            yield event
        except httpx.TransportError as exc:
            error = self._transport_error(exc, timeout, state.events)
            raise error from error.__cause__
        except ProviderError as exc:  # it may quote the server, which may echo the key
            self.hide(exc)
            raise
        if not state.done:
            raise ProviderResponseError(
                f"{self.name}: the stream from {self.where} ended after {state.events} events "
                "without [DONE]; the answer is incomplete",
                retryable=True,
            )
        response_ = state.response(self)
        for event in state.unsaid():
            yield event
        for call in response_.message.tool_calls:
            yield StreamEvent("tool_call", tool_call=call)
        yield StreamEvent("done", response=response_)

    def _feed(self, state: _StreamState, data: str) -> list[StreamEvent]:
        """One stream event's data into ``state``; its text and tool-call deltas."""
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise ProviderResponseError(
                f"{self.name}: a stream event from {self.where} is not JSON ({exc}): {data[:200]!r}"
            ) from exc
        if not isinstance(chunk, dict):
            raise ProviderResponseError(
                f"{self.name}: a stream event from {self.where} is not an object: {data[:200]!r}"
            )
        if chunk.get("error"):
            raise ProviderError(
                f"{self.name}: the provider reported an error mid-stream: "
                f"{provider_error_text(chunk)}"
            )
        try:
            return state.feed(chunk)
        except (AttributeError, TypeError, ValueError) as exc:
            raise ProviderResponseError(
                f"{self.name}: a stream event from {self.where} is malformed ({exc}): "
                f"{data[:200]!r}"
            ) from exc


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
    if whole:
        repeated_id([c.get("id") for c in calls], where)


def _kind(value: Any) -> str:
    return _JSON_KINDS.get(type(value), "a number" if isinstance(value, (int, float)) else "null")


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    sent: int = 0  # how many of the arguments' fragments a delta has told; 0: none yet

    def tool_call(self, index: int, arguments: str) -> ToolCall:
        return ToolCall(self.id or f"call_{index}", self.name, arguments)

    def delta(self, index: int) -> StreamEvent | None:
        """The arguments' fragments not told yet, once the name is known (the first even empty)."""
        fragment = "".join(self.arguments[self.sent :])
        if not self.name or (self.sent and not fragment):
            return None
        self.sent = len(self.arguments)
        return StreamEvent("tool_call_delta", tool_call=self.tool_call(index, fragment))


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

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        """Take one chunk in; return its text delta and tool-call deltas."""
        self.events += 1
        self.model = chunk.get("model") or self.model
        if chunk.get("usage"):
            self.usage = usage_from_openai(chunk["usage"])
        out: list[StreamEvent] = []
        for i, choice in enumerate(chunk.get("choices") or ()):
            if choice.get("index", 0) != 0:
                continue
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            delta = choice.get("delta") or {}
            calls = delta.get("tool_calls")
            where = f"stream event {self.events}: choices[{i}].delta.tool_calls"
            check_tool_calls(calls, where, whole=False)
            text = delta.get("content") or ""
            if text:
                self.text.append(text)
                out.append(StreamEvent("text", text=text))
            out += filter(None, map(self._call_delta, calls or ()))
        return out

    def _call_delta(self, tc: dict[str, Any]) -> StreamEvent | None:
        index = tc.get("index")
        if index is None:  # servers that send each call whole, without an index
            index = len(self.calls) if tc.get("id") or not self.calls else max(self.calls)
        call = self.calls.setdefault(index, _Call())
        call.id = tc.get("id") or call.id
        function = tc.get("function") or {}
        call.name += function.get("name") or ""
        call.arguments.append(function.get("arguments") or "")
        return call.delta(index)

    def unsaid(self) -> list[StreamEvent]:
        """A ``"{}"`` delta for each call that sent no arguments (its final ``arguments``)."""
        return [
            StreamEvent("tool_call_delta", tool_call=call.tool_call(index, "{}"))
            for index, call in sorted(self.calls.items())
            if not any(call.arguments)
        ]

    def response(self, model: OpenAIModel) -> ModelResponse:
        calls = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call.name:
                raise ProviderResponseError(
                    f"{model.name}: the streamed tool call at index {index} from {model.where} "
                    "has no function name"
                )
            calls.append(call.tool_call(index, "".join(call.arguments) or "{}"))
        try:
            repeated_id([c.id for c in calls], "the streamed tool_calls")
        except ValueError as exc:
            raise ProviderResponseError(f"{model.name}: {exc}") from None
        return ModelResponse(
            message=Message.assistant("".join(self.text), calls),
            usage=self.usage or Usage(requests=1),
            finish_reason=self.finish_reason,
            model=self.model or model.model,
        )
