"""AnthropicModel: Claude through the Messages API, on the official ``anthropic`` SDK.

The SDK is imported on the first request, never at import. Its client is made with
``max_retries=0``: retrying lives in one place, the core ``retry()`` middleware, and this model
maps every SDK failure onto agentkit's errors with ``retryable`` and ``retry_after`` set
(:func:`provider_error`), so no SDK exception type reaches the caller.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ModelDeadlineExceeded
from agentkit_core import ProviderError
from agentkit_core import ToolCall
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import PartialJSONParser
from agentkit_core.plugin import ProviderHTTPError
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import hide_secret

from ._cache import place_breakpoints
from ._respell import Respeller
from ._wire import arguments_text
from ._wire import finish_reason
from ._wire import message_from_anthropic
from ._wire import messages_to_anthropic
from ._wire import settings_to_anthropic
from ._wire import system_to_anthropic
from ._wire import usage_from_anthropic

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: ``max_tokens`` when neither the request's settings nor ``AnthropicModel(max_tokens=)`` set it
#: (the API requires one): enough for a long answer on every current Claude model.
DEFAULT_MAX_TOKENS = 4096
#: HTTP statuses worth another attempt: timeouts, conflicts, rate limits, server errors, 529.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
#: An error event's ``error.type`` inside a stream (HTTP 200) as the status it stands for.
_ERROR_TYPES = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
StructuredOutput = Literal["native", "tool", "off"]


class AnthropicModel:
    """A Claude model behind the Anthropic Messages API.

    ``api_key`` defaults to ``$ANTHROPIC_API_KEY`` and ``base_url`` to ``$ANTHROPIC_BASE_URL``
    (else the Anthropic API). ``max_tokens`` is the answer's budget when the request's settings
    do not set one (the API requires it; :data:`DEFAULT_MAX_TOKENS`). ``thinking`` turns on
    extended thinking: a budget of tokens (at least 1024, below ``max_tokens``) or
    ``"adaptive"``. ``cache`` places prompt-cache breakpoints (see ``_cache``) with
    ``cache_ttl`` ``"5m"`` or ``"1h"``. ``structured_output`` is how ``request.output`` is
    enforced: ``"native"`` (``output_config.format``, JSON Schema), ``"tool"`` (a forced tool
    call, for models without it) or ``"off"`` (the agent puts the schema in the prompt).
    ``timeout`` bounds each network wait, in seconds.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking: int | Literal["adaptive"] | None = None,
        cache: bool = True,
        cache_ttl: Literal["5m", "1h"] = "5m",
        structured_output: StructuredOutput = "native",
        timeout: float = 600.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        if not model:
            raise ConfigError(
                "the anthropic model needs a model name, as in 'anthropic:claude-sonnet-4-5'"
            )
        source = "base_url=" if base_url is not None else f"${BASE_URL_ENV}"
        base = base_url if base_url is not None else os.environ.get(BASE_URL_ENV, "")
        base = (base or DEFAULT_BASE_URL).rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ConfigError(
                f"{source} {base!r} is not an http(s) URL; set it to the API root, such as "
                f"{DEFAULT_BASE_URL}",
                value=base,
                source=source,
            )
        _check(
            isinstance(max_tokens, int) and max_tokens > 0,
            "max_tokens",
            max_tokens,
            "a positive number of tokens",
        )
        _check(
            thinking is None
            or thinking == "adaptive"
            or (isinstance(thinking, int) and not isinstance(thinking, bool) and thinking >= 1024),
            "thinking",
            thinking,
            "a budget of at least 1024 tokens, 'adaptive' or None",
        )
        _check(cache_ttl in ("5m", "1h"), "cache_ttl", cache_ttl, "'5m' or '1h'")
        _check(
            structured_output in ("native", "tool", "off"),
            "structured_output",
            structured_output,
            "'native', 'tool' or 'off'",
        )
        _check(
            isinstance(timeout, (int, float)) and timeout > 0,
            "timeout",
            timeout,
            "a positive number of seconds",
        )
        self.model = model
        self.name = f"anthropic:{model}"
        self.base_url = base
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.thinking = thinking
        self.cache = cache
        self.cache_ttl = cache_ttl
        self.structured_output = structured_output
        self.supports_structured_output = structured_output != "off"
        self.timeout = float(timeout)
        self.headers = dict(headers or {})
        self._client: AsyncAnthropic | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r}, base_url={self.base_url!r})"

    # ------------------------------------------------------------------ the client

    def client(self) -> AsyncAnthropic:
        """The SDK client (made on first use, once per event loop: its pool is bound to one)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            key = self.api_key if self.api_key is not None else os.environ.get(API_KEY_ENV, "")
            if not key:
                raise ConfigError(
                    f"{self.name}: no API key: set {API_KEY_ENV} (or pass api_key=)",
                    source=API_KEY_ENV,
                )
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(
                api_key=key,
                base_url=self.base_url,
                max_retries=0,
                timeout=self.timeout,
                default_headers=self.headers or None,
            )
            self._loop = loop
        return self._client

    async def __aenter__(self) -> AnthropicModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the SDK client's connection pool (a later request opens a new one)."""
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            await client.close()

    # ------------------------------------------------------------------ the wire

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages API body for ``request`` (without ``stream``)."""
        system, count = system_to_anthropic(request.messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.settings.get("max_tokens", self.max_tokens),
            "messages": messages_to_anthropic(request.messages[count:], model=self.name),
        }
        if system:
            body["system"] = system
        tools = [
            {
                "name": t.name,
                **({"description": t.description} if t.description else {}),
                "input_schema": t.parameters,
            }
            for t in request.tools
        ]
        output = request.output if self.supports_structured_output else None
        if output is not None and self.structured_output == "tool":
            tools.append(
                {
                    "name": output.name,
                    "description": _OUTPUT_TOOL_DOC,
                    "input_schema": output.schema,
                }
            )
        if tools:
            body["tools"] = tools
        if self.thinking is not None:
            body["thinking"] = (
                {"type": "adaptive"}
                if self.thinking == "adaptive"
                else {"type": "enabled", "budget_tokens": self.thinking}
            )
        settings = settings_to_anthropic(request.settings, tools=bool(tools))
        output_config = settings.pop("output_config", {})
        if output is not None and self.structured_output == "native":
            output_config = {
                **output_config,
                "format": {"type": "json_schema", "schema": output.schema},
            }
        elif output is not None and "tool_choice" not in settings:
            # forced tool use; with other tools on offer any tool may be called first
            forced = {"type": "tool", "name": output.name} if not request.tools else {"type": "any"}
            settings["tool_choice"] = forced if self.thinking is None else {"type": "auto"}
        if output_config:
            body["output_config"] = output_config
        body.update(settings)
        budget = body.get("thinking", {}).get("budget_tokens")
        if budget is not None and budget >= body["max_tokens"]:
            raise ConfigError(
                f"{self.name}: thinking={budget} must be less than max_tokens="
                f"{body['max_tokens']}; raise max_tokens or lower the thinking budget",
                value=budget,
                source="AnthropicModel(thinking=)",
            )
        if self.cache:
            mark = (
                {"type": "ephemeral"}
                if self.cache_ttl == "5m"
                else {"type": "ephemeral", "ttl": "1h"}
            )
            place_breakpoints(body, mark)
        return body

    def _output_tool(self, request: ModelRequest) -> str | None:
        """The name of the tool that carries the structured answer, in ``"tool"`` mode."""
        if request.output is not None and self.structured_output == "tool":
            return request.output.name
        return None

    # ------------------------------------------------------------------ calls

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send ``request`` and return the whole answer."""
        body = self.body(request)
        timeout = request.timeout(self.timeout)
        client = self.client()
        try:
            answer = await client.messages.create(**_sdk_arguments(body), timeout=timeout)
            data = answer.to_dict(mode="json")
        except Exception as exc:
            error = self._error(exc, timeout)
            raise error from error.__cause__  # none when it quotes the key
        return self._parse(data, self._output_tool(request))

    def _parse(self, data: Any, output_tool: str | None) -> ModelResponse:
        if not isinstance(data, dict) or data.get("type") not in ("message", None):
            raise ProviderResponseError(f"{self.name}: the answer is not a message: {data!r:.200}")
        try:
            message = message_from_anthropic(data.get("content"), model=self.name)
        except ProviderResponseError as exc:
            raise ProviderResponseError(f"{self.name}: {exc}") from exc
        return ModelResponse(
            message=_structured(message, output_tool),
            usage=usage_from_anthropic(data.get("usage")),
            finish_reason=finish_reason(data.get("stop_reason")),
            model=str(data.get("model") or self.model),
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` with ``stream: true`` and yield its events as they arrive.

        Text deltas come as they arrive, and thinking deltas as ``"reasoning"`` events (a
        signature or a redacted block shows nothing: neither is readable); a tool call is told
        by ``"tool_call_delta"`` events, the first when its block starts, then its
        ``input_json`` deltas respelled as its final arguments spell them (:mod:`._respell`), and
        comes complete when the message stops, its deltas fed to agentkit's incremental JSON
        parser on the way, so broken arguments fail at once. In ``"tool"`` structured-output
        mode the answer tool's JSON streams as text. A stream that ends without
        ``message_stop`` raises.
        """
        body = self.body(request)
        timeout = request.timeout(self.timeout)
        client = self.client()
        state = _Stream(self.name, self._output_tool(request))
        try:
            events = await client.messages.create(
                **_sdk_arguments(body), stream=True, timeout=timeout
            )
            async for event in events:
                for out in state.feed(event.to_dict(mode="json")):
                    yield out
        except ProviderError:
            raise
        except Exception as exc:
            error = self._error(exc, timeout, state.events)
            raise error from error.__cause__  # none when it quotes the key
        if not state.stopped:
            raise ProviderResponseError(
                f"{self.name}: the stream ended after {state.events} events without "
                "message_stop; the answer is incomplete",
                retryable=True,
            )
        response = state.response(self)
        for call in response.message.tool_calls:
            yield StreamEvent("tool_call", tool_call=call)
        yield StreamEvent("done", response=response)

    # ------------------------------------------------------------------ errors

    def _error(self, exc: Exception, timeout: float, events: int = 0) -> ProviderError:
        """``exc`` (any SDK failure) as agentkit's error, caused by it, the API key masked."""
        key = self.api_key if self.api_key is not None else os.environ.get(API_KEY_ENV, "")
        return hide_secret(provider_error(exc, self.name, timeout, events), key, exc)


_OUTPUT_TOOL_DOC = "Give the final answer by calling this tool with it as the input."


def _check(ok: bool, name: str, value: Any, wanted: str) -> None:
    if not ok:
        raise ConfigError(
            f"AnthropicModel({name}=) must be {wanted}, got {value!r}",
            value=value,
            source=f"AnthropicModel({name}=)",
        )


#: The body fields given to ``messages.create`` by name; the rest go as its ``extra_body``, so
#: a field this SDK release has no keyword for (or a provider's own) is sent all the same.
_SDK_KEYWORDS = ("model", "max_tokens", "messages")


def _sdk_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as ``messages.create`` arguments."""
    known = {k: body[k] for k in _SDK_KEYWORDS}
    known["extra_body"] = {k: v for k, v in body.items() if k not in _SDK_KEYWORDS}
    return known


def _structured(message: Message, output_tool: str | None) -> Message:
    """In ``"tool"`` mode, the answer tool's call as the message's JSON text."""
    if output_tool is None:
        return message
    answer = [c for c in message.tool_calls if c.name == output_tool]
    if not answer:
        return message
    others = tuple(c for c in message.tool_calls if c.name != output_tool)
    if others:  # real calls first: the loop answers them and asks again
        return Message("assistant", message.content, others, metadata=message.metadata)
    return Message("assistant", answer[0].arguments, metadata=message.metadata)


def provider_error(exc: Exception, name: str, timeout: float, events: int = 0) -> ProviderError:
    """Any failure of an SDK call as agentkit's error; no SDK exception type gets out.

    An HTTP error (an error event inside a stream too, by its ``error.type``) is a
    :class:`ProviderHTTPError` with ``retry_after`` from ``retry-after-ms`` or ``Retry-After``;
    a timeout is :class:`ModelDeadlineExceeded`; a dropped connection a retryable
    :class:`ProviderError`; an answer that is not what the API promises a
    :class:`ProviderResponseError`.
    """
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
        status = exc.status_code
        if status < 400:  # an error event in a 200 stream
            status = _ERROR_TYPES.get(str(error.get("type")), 500)
        message = str(error.get("message") or exc.message)
        where = f" mid-stream after {events} events" if events else ""
        hint = {401: f" (check {API_KEY_ENV} or api_key=)", 404: " (check the model name)"}
        return ProviderHTTPError(
            f"{name}: HTTP {status}{where}: {message}{hint.get(status, '')}",
            status=status,
            provider_message=message,
            retryable=status in RETRYABLE_STATUSES or status >= 500,
            retry_after=ProviderHTTPError.retry_after_of(exc.response.headers),
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return ModelDeadlineExceeded(
            f"{name}: no answer within {timeout:g} s (the client's timeout)", deadline=timeout
        )
    if isinstance(exc, anthropic.APIConnectionError):
        if events:
            return ProviderError(
                f"{name}: the connection dropped mid-stream after {events} events "
                f"({exc.__cause__ or exc}); the answer is incomplete",
                retryable=True,
            )
        return ProviderError(f"{name}: the request failed: {exc.__cause__ or exc}", retryable=True)
    if isinstance(exc, (anthropic.APIResponseValidationError, ValueError, TypeError, KeyError)):
        return ProviderResponseError(f"{name}: the answer is malformed: {exc}")
    return ProviderError(f"{name}: {type(exc).__name__}: {exc}")


@dataclass
class _Block:
    """A content block being streamed: its start, and the text or JSON pieces after it."""

    start: dict[str, Any]
    pieces: list[str] = field(default_factory=list)
    signature: str = ""
    parser: PartialJSONParser | None = None
    #: A tool call's arguments respelled as told in its deltas (None: not told, the answer tool).
    respeller: Respeller | None = None
    told: list[str] = field(default_factory=list)

    def tell(self, fragment: str) -> list[StreamEvent]:
        """A ``"tool_call_delta"`` of this tool call: ``fragment`` of its arguments."""
        self.told.append(fragment)
        call = ToolCall(self.start["id"], self.start["name"], fragment)
        return [StreamEvent("tool_call_delta", tool_call=call)]


@dataclass
class _Stream:
    """A streamed answer being assembled from its events."""

    name: str
    output_tool: str | None
    blocks: dict[int, _Block] = field(default_factory=dict)
    content: dict[int, dict[str, Any]] = field(default_factory=dict)
    started: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    events: int = 0
    stopped: bool = False

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one event in; the text and reasoning deltas to show for it."""
        self.events += 1
        kind = event.get("type")
        try:
            if kind == "message_start":
                self.started = event["message"]
                self.usage.update(self.started.get("usage") or {})
            elif kind == "content_block_start":
                self.blocks[event["index"]] = _Block(dict(event["content_block"]))
                return self._started(self.blocks[event["index"]])
            elif kind == "content_block_delta":
                return self._delta(self.blocks[event["index"]], event["delta"])
            elif kind == "content_block_stop":
                index = event["index"]
                block = self.blocks.pop(index)
                self.content[index] = self._finish(block, index)
                return self._told_rest(block)
            elif kind == "message_delta":
                self.stop_reason = (event.get("delta") or {}).get("stop_reason", self.stop_reason)
                self.usage.update(
                    {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
                )
            elif kind == "message_stop":
                self.stopped = True
        except (KeyError, TypeError, AttributeError, ValueError) as exc:  # ParseError too
            raise ProviderResponseError(
                f"{self.name}: stream event {self.events} ({kind}) is malformed ({exc}): "
                f"{json.dumps(event)[:200]}"
            ) from exc
        return []

    def _started(self, block: _Block) -> list[StreamEvent]:
        start = block.start
        if start.get("type") == "tool_use":
            block.parser = PartialJSONParser()
            start["input"] = {}
            if start.get("name") != self.output_tool:
                block.respeller = Respeller()
                return block.tell("")
        elif start.get("type") == "text" and start.get("text"):
            block.pieces.append(start.pop("text"))
            return [StreamEvent("text", text=block.pieces[-1])]
        elif start.get("type") == "thinking" and start.get("thinking"):
            block.pieces.append(start.pop("thinking"))
            return [StreamEvent("reasoning", text=block.pieces[-1])]
        return []

    def _delta(self, block: _Block, delta: dict[str, Any]) -> list[StreamEvent]:
        kind = delta["type"]
        if kind == "text_delta":
            block.pieces.append(delta["text"])
            return [StreamEvent("text", text=delta["text"])] if delta["text"] else []
        if kind == "input_json_delta":
            piece = delta["partial_json"]
            if block.parser is None:
                raise TypeError("an input_json_delta in a block that is not a tool_use")
            block.parser.feed(piece)
            block.pieces.append(piece)
            if block.respeller is None:  # the answer tool's JSON, which streams as text
                return [StreamEvent("text", text=piece)] if piece else []
            fragment = block.respeller.feed(piece)
            return block.tell(fragment) if fragment else []
        elif kind == "thinking_delta":
            block.pieces.append(delta["thinking"])
            return [StreamEvent("reasoning", text=delta["thinking"])] if delta["thinking"] else []
        elif kind == "signature_delta":
            block.signature += delta["signature"]
        elif kind == "citations_delta":
            block.start.setdefault("citations", []).append(delta["citation"])
        return []

    def _finish(self, block: _Block, index: int) -> dict[str, Any]:
        """The whole block, as a whole answer would have carried it."""
        out = block.start
        kind = out.get("type")
        if kind == "text":
            out["text"] = out.get("text", "") + "".join(block.pieces)
        elif kind == "thinking":
            out["thinking"] = out.get("thinking", "") + "".join(block.pieces)
            out["signature"] = out.get("signature", "") + block.signature
        elif kind == "tool_use" and block.parser is not None:
            raw = "".join(block.pieces)
            value = block.parser.finish() if raw.strip() else {}
            if not isinstance(value, dict):
                raise ProviderResponseError(
                    f"{self.name}: the streamed input of tool call {out.get('id')!r} (content "
                    f"block {index}) is not a JSON object: {raw[:200]!r}"
                )
            out["input"] = value
            if self.output_tool is not None and out.get("name") == self.output_tool:
                out["_raw"] = raw
        return out

    def _told_rest(self, block: _Block) -> list[StreamEvent]:
        """The delta of what a finished call's arguments hold past what its deltas told.

        ``"{}"`` for a call that streamed none: its deltas then join to its arguments.
        """
        if block.respeller is None:
            return []
        arguments, told = arguments_text(block.start["input"]), "".join(block.told)
        if arguments == told or not arguments.startswith(told):
            return []
        return block.tell(arguments[len(told) :])

    def response(self, model: AnthropicModel) -> ModelResponse:
        content = [self.content[i] for i in sorted(self.content)]
        raws = {b["id"]: b.pop("_raw") for b in content if "_raw" in b}
        message = message_from_anthropic(content, model=model.name)
        if raws:  # the answer tool's JSON as it streamed, so the text deltas join to it
            message = Message(
                "assistant",
                message.content,
                tuple(
                    ToolCall(c.id, c.name, raws.get(c.id, c.arguments)) for c in message.tool_calls
                ),
                metadata=message.metadata,
            )
        return ModelResponse(
            message=_structured(message, self.output_tool),
            usage=usage_from_anthropic(self.usage),
            finish_reason=finish_reason(self.stop_reason),
            model=str(self.started.get("model") or model.model),
        )
