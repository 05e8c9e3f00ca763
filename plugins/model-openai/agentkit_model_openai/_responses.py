"""OpenAIResponsesModel: OpenAI's Responses API (``POST /responses``) over the plugin's httpx.

Why httpx and not the ``openai`` SDK: the plugin already speaks HTTP for Chat Completions, and
against the same local server a request through this model costs less than the bare SDK call
``client.responses.create(...)`` (benchmarks/models/bench_openai_responses.py; the figures are
in benchmarks/README.md) — the SDK builds pydantic models of every event that this model only
reads a few keys of. The plugin keeps one dependency (httpx) and one error mapping.

Reasoning is kept by value (``store: false``, ``include: ["reasoning.encrypted_content"]``):
see :mod:`agentkit_model_openai._responses_wire`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import StreamEvent

from ._http import DEFAULT_BASE_URL
from ._http import HTTPModel
from ._http import repeated_id
from ._http import sse_data
from ._responses_wire import message_from_output
from ._responses_wire import messages_to_responses
from ._responses_wire import settings_to_responses
from ._responses_wire import usage_from_responses

if TYPE_CHECKING:
    import httpx

#: Error codes of a failed response (or an ``error`` stream event) worth another attempt.
RETRYABLE_CODES = frozenset({"server_error", "rate_limit_exceeded", "server_is_overloaded"})
#: ``incomplete_details.reason`` as a Chat Completions style finish reason.
_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
_TERMINAL = frozenset({"response.completed", "response.incomplete"})
_CALL_EVENTS = frozenset({"response.output_item.added", "response.function_call_arguments.delta"})


class OpenAIResponsesModel(HTTPModel):
    """A model behind OpenAI's ``/responses`` endpoint: ``"openai-responses:<model>"``.

    ``base_url``, ``api_key``, ``timeout``, ``headers`` and ``client`` are as for
    :class:`~agentkit_model_openai.OpenAIModel`; against the OpenAI API (the default base URL)
    an API key is required. ``reasoning_summary`` (``"auto"``, ``"concise"``, ``"detailed"``)
    asks a reasoning model for a summary of its reasoning, kept with the reasoning items.
    ``structured_output=False`` leaves ``text.format`` out (the agent then puts the schema in
    the prompt).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        structured_output: bool = True,
        reasoning_summary: str | None = None,
        headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            "openai-responses",
            "responses",
            model,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            headers=headers,
            client=client,
        )
        if not self.api_key and self.base_url == DEFAULT_BASE_URL:
            raise ConfigError(
                f"{self.name}: no API key for {DEFAULT_BASE_URL}: set OPENAI_API_KEY "
                "(or pass api_key=)",
                value=None,
                source="$OPENAI_API_KEY",
            )
        if reasoning_summary not in (None, "auto", "concise", "detailed"):
            raise ConfigError(
                f"reasoning_summary must be 'auto', 'concise', 'detailed' or None, got "
                f"{reasoning_summary!r}",
                value=reasoning_summary,
                source="OpenAIResponsesModel(reasoning_summary=)",
            )
        self.reasoning_summary = reasoning_summary
        self.supports_structured_output = structured_output

    def body(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The JSON body for ``request``: the Responses API wire format."""
        body: dict[str, Any] = {
            "model": self.model,
            "input": messages_to_responses(request.messages, model=self.name),
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    **({"description": t.description} if t.description else {}),
                    "parameters": t.parameters,
                    "strict": False,
                }
                for t in request.tools
            ]
        if request.output is not None and self.supports_structured_output:
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": request.output.name,
                    "schema": request.output.schema,
                    "strict": request.output.strict,
                }
            }
        body.update(
            settings_to_responses(
                request.settings,
                tools=bool(request.tools),
                reasoning_summary=self.reasoning_summary,
            )
        )
        if stream:
            body["stream"] = True
        return body

    def _parse(self, data: Any, output: list[Any] | None = None) -> ModelResponse:
        """A response object as a ModelResponse.

        ``output`` holds the items a stream delivered, for a final event that leaves them out.
        """
        if not isinstance(data, dict) or not isinstance(data.get("output", []), list):
            raise ProviderResponseError(
                f"{self.name}: the answer from {self.where} is not a response object: "
                f"{json.dumps(data)[:200]}"
            )
        status = data.get("status")
        if status == "failed" or data.get("error"):
            raise self._failed(data.get("error"), "the response failed")
        items = data.get("output") or output or []
        message = message_from_output(items, model=self.name)
        try:
            repeated_id([call.id for call in message.tool_calls], "function_calls")
        except ValueError as exc:
            raise ProviderResponseError(f"{self.name}: {exc}") from None
        if status == "incomplete":
            reason = (data.get("incomplete_details") or {}).get("reason") or "unknown"
            if not message.text and not message.tool_calls:
                raise ProviderResponseError(
                    f"{self.name}: the response from {self.where} is incomplete ({reason}) with "
                    "no text or tool call"
                    + (
                        "; raise settings['max_tokens'] (reasoning counts against it)"
                        if reason == "max_output_tokens"
                        else ""
                    )
                )
            finish = _INCOMPLETE.get(reason, reason)
        else:
            finish = "tool_calls" if message.tool_calls else "stop"
        return ModelResponse(
            message=message,
            usage=usage_from_responses(data.get("usage")),
            finish_reason=finish,
            model=data.get("model") or self.model,
        )

    def _failed(self, error: Any, what: str) -> ProviderError:
        """The error for a failed response or an ``error`` stream event."""
        error = error if isinstance(error, dict) else {"message": str(error)}
        code = error.get("code")
        return ProviderError(
            f"{self.name}: {what}: {error.get('message') or json.dumps(error)}"
            + (f" ({code})" if code else ""),
            retryable=code in RETRYABLE_CODES,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` with ``stream: true`` and yield its events as they arrive.

        Text deltas (``response.output_text.delta``) come as they arrive, reasoning summary
        deltas (``response.reasoning_summary_text.delta``) as ``"reasoning"`` events, a function
        call's ``"tool_call_delta"`` events when its item is added and as its arguments stream
        (``response.function_call_arguments.delta``), the call itself when its item is done,
        and last the answer of ``response.completed`` (or
        ``response.incomplete``). ``response.failed`` and ``error`` events raise; a stream that
        ends before its final event raises instead of returning a partial answer.
        """
        import httpx

        timeout = request.timeout(self.timeout)
        body = self.body(request, stream=True)
        output: dict[int, Any] = {}  # finished items by output_index
        calls = _CallDeltas()
        final: Any = None
        events = 0
        try:
            async with self._connection() as client:
                async with client.stream(
                    "POST", self.url, json=body, headers=self.headers, timeout=timeout
                ) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        raise self._http_error(response)
                    async for data in sse_data(response.aiter_lines()):
                        events += 1
                        event = self._event(data)
                        kind = event.get("type")
                        if kind in ("response.output_text.delta", "response.refusal.delta"):
                            if event.get("delta"):
                                yield StreamEvent("text", text=str(event["delta"]))
                        elif kind == "response.reasoning_summary_text.delta":
                            if event.get("delta"):
                                yield StreamEvent("reasoning", text=str(event["delta"]))
                        elif kind in _CALL_EVENTS:
                            if (delta := calls.feed(kind, event)) is not None:
                                yield delta
                        elif kind == "response.output_item.done":
                            item = event.get("item")
                            index = int(event.get("output_index", len(output)))
                            output[index] = item
                            if isinstance(item, dict) and item.get("type") == "function_call":
                                [call] = message_from_output([item], model=self.name).tool_calls
                                if (delta := calls.done(index, call)) is not None:
                                    yield delta
                                yield StreamEvent("tool_call", tool_call=call)
                        elif kind in _TERMINAL:
                            final = event.get("response")
                            break
                        elif kind == "response.failed":
                            response_ = event.get("response") or {}
                            raise self._failed(response_.get("error"), "the response failed")
                        elif kind == "error":
                            raise self._failed(event, "the provider reported an error mid-stream")
        except httpx.TransportError as exc:
            error = self._transport_error(exc, timeout, events)
            raise error from error.__cause__
        except ProviderError as exc:  # it may quote the server, which may echo the key
            self.hide(exc)
            raise
        if final is None:
            raise ProviderResponseError(
                f"{self.name}: the stream from {self.where} ended after {events} events without "
                "response.completed; the answer is incomplete",
                retryable=True,
            )
        yield StreamEvent("done", response=self._parse(final, [output[i] for i in sorted(output)]))

    def _event(self, data: str) -> dict[str, Any]:
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise ProviderResponseError(
                f"{self.name}: a stream event from {self.where} is not JSON ({exc}): {data[:200]!r}"
            ) from exc
        if not isinstance(event, dict):
            raise ProviderResponseError(
                f"{self.name}: a stream event from {self.where} is not an object: {data[:200]!r}"
            )
        return event


class _CallDeltas:
    """The function calls being written in a stream, by output index: what deltas told of each.

    A call is told when its item is added (its id and name, the arguments empty so far), then
    fragment by fragment; when its item is done, whatever its final ``arguments`` hold past
    what was told (all of it for a call never announced, ``"{}"`` for one that sent none).
    """

    def __init__(self) -> None:
        self._told: dict[Any, tuple[str, str, list[str]]] = {}  # id, name, fragments told

    def feed(self, kind: str, event: dict[str, Any]) -> StreamEvent | None:
        index = event.get("output_index")
        if kind == "response.output_item.added":
            item = event.get("item")
            if not isinstance(item, dict) or item.get("type") != "function_call":
                return None
            call_id, name, arguments = (item.get(k) for k in ("call_id", "name", "arguments"))
            if not (isinstance(call_id, str) and isinstance(name, str) and call_id and name):
                return None  # told whole when done
            self._told[index] = (call_id, name, [])
            fragment = arguments if isinstance(arguments, str) else ""
        else:
            delta = event.get("delta")
            if index not in self._told or not isinstance(delta, str) or not delta:
                return None
            fragment = delta
        call_id, name, told = self._told[index]
        told.append(fragment)
        return StreamEvent("tool_call_delta", tool_call=ToolCall(call_id, name, fragment))

    def done(self, index: int, call: ToolCall) -> StreamEvent | None:
        """The delta that completes ``call``'s, if its final arguments hold more than was told."""
        if index not in self._told:
            return StreamEvent("tool_call_delta", tool_call=call)
        told = "".join(self._told.pop(index)[2])
        if call.arguments == told or not call.arguments.startswith(told):
            return None
        rest = call.arguments[len(told) :]
        return StreamEvent("tool_call_delta", tool_call=ToolCall(call.id, call.name, rest))
