"""GeminiModel: Gemini through the official google-genai SDK, on the Gemini API or Vertex AI.

The SDK is imported on the first request, never at plugin import. Retries live in one place,
the core ``retry()`` middleware: the SDK's own retrying is left off (its default), and every
SDK failure becomes an agentkit error saying whether another attempt may help.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator
from collections.abc import Iterator
from contextlib import contextmanager
from json import JSONDecodeError
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import AgentkitError
from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ModelDeadlineExceeded
from agentkit_core import ProviderError
from agentkit_core import Usage
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import ModelResponse
from agentkit_core.plugin import ProviderHTTPError
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import hide_secret

from ._wire import SAFETY_FINISH
from ._wire import Assembler
from ._wire import finish_reason
from ._wire import http_options
from ._wire import messages_to_gemini
from ._wire import settings_to_gemini
from ._wire import usage_from_gemini

if TYPE_CHECKING:
    from google.genai import Client

#: The API key variables, in the SDK's order: GOOGLE_API_KEY wins when both are set.
KEY_ENV = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
#: HTTP statuses worth another attempt: timeouts, conflicts, rate limits (and every 5xx).
RETRYABLE_STATUSES = frozenset({408, 409, 429})


class GeminiBlockedError(ProviderError):
    """Gemini refused to answer: the prompt was blocked, or the answer stopped empty by a filter.

    ``reason`` is Gemini's (``SAFETY``, ``PROHIBITED_CONTENT``...),
    ``where`` is ``"prompt"`` or ``"answer"``; not retryable (the same request is refused again).
    """

    def __init__(self, message: str, *, reason: str, where: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.where = where


class GeminiModel:
    """A Gemini model (``"gemini:gemini-2.5-flash"``) through the google-genai SDK.

    The API key is ``api_key=``, else ``$GOOGLE_API_KEY``, else ``$GEMINI_API_KEY`` (the SDK's
    order). ``vertexai=True`` talks to Vertex AI instead: with ``project=``/``location=`` (or
    the SDK's ``GOOGLE_CLOUD_PROJECT``/``GOOGLE_CLOUD_LOCATION``) and Google credentials
    (``credentials=``, else application default credentials), or with an API key (Vertex
    express mode). ``base_url`` replaces the API root (the SDK's ``http_options.base_url``).
    ``timeout`` bounds each network wait in seconds (a request may set
    ``settings={"timeout": ...}``). ``include_thoughts`` asks thinking models for thought
    summaries. ``cached_content`` names an explicit context cache (``cachedContents/...``)
    holding the system instruction and tools, which are then not sent again.
    ``safety_settings`` go to the API as they are.
    """

    supports_structured_output = True

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        vertexai: bool = False,
        project: str | None = None,
        location: str | None = None,
        credentials: Any = None,
        api_version: str | None = None,
        timeout: float = 60.0,
        include_thoughts: bool = True,
        cached_content: str | None = None,
        safety_settings: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if not model:
            raise ConfigError(
                "the gemini model needs a model name, as in 'gemini:gemini-2.5-flash'"
            )
        if not timeout > 0:
            raise ConfigError(
                f"timeout must be a positive number of seconds, got {timeout!r}",
                value=timeout,
                source="GeminiModel(timeout=)",
            )
        if base_url is not None and not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"base_url={base_url!r} is not an http(s) URL; give the API root, such as "
                "https://generativelanguage.googleapis.com",
                value=base_url,
                source="GeminiModel(base_url=)",
            )
        key = api_key or next((os.environ[k] for k in KEY_ENV if os.environ.get(k)), None)
        if key is None and not vertexai:
            raise ConfigError(
                "gemini: no API key; set GEMINI_API_KEY (or GOOGLE_API_KEY, which wins when "
                "both are set) or pass api_key=",
                value=None,
                source="GEMINI_API_KEY / GOOGLE_API_KEY",
            )
        if cached_content is not None and not cached_content.startswith("cachedContents/"):
            raise ConfigError(
                f"cached_content={cached_content!r} is not a cache name; give the name the "
                "caches API returned, 'cachedContents/<id>'",
                value=cached_content,
                source="GeminiModel(cached_content=)",
            )
        self.model = model
        self.name = f"gemini:{model}"
        self.timeout = float(timeout)
        self.include_thoughts = include_thoughts
        self.cached_content = cached_content
        self.safety_settings = safety_settings
        self.base_url = base_url
        self._options: dict[str, Any] = {"vertexai": vertexai}
        if key is not None:
            self._options["api_key"] = key
        if vertexai and key is None:
            self._options.update(project=project, location=location, credentials=credentials)
        http: dict[str, Any] = {}
        if base_url is not None:
            http["base_url"] = base_url
        if api_version is not None:
            http["api_version"] = api_version
        if headers:
            http["headers"] = dict(headers)
        if http:
            self._options["http_options"] = http
        self._clients: dict[asyncio.AbstractEventLoop, Client] = {}

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"GeminiModel({self.model!r}{where})"

    # ------------------------------------------------------------------ the client

    def _client(self) -> Client:
        """The SDK client of the running event loop (its connection pool belongs to one loop)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            with self._translate(0.0):
                from google import genai

                client = genai.Client(**self._options)
            self._clients = {k: v for k, v in self._clients.items() if not k.is_closed()}
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the SDK client of the running loop (the next request opens a new one)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aio.aclose()

    async def __aenter__(self) -> GeminiModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ the wire

    def config(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK's ``GenerateContentConfig`` (as a dict) for ``request``."""
        system, _ = messages_to_gemini(request.messages, model=self.name)
        return self._config(request, system)

    def _config(self, request: ModelRequest, system: dict[str, Any] | None) -> dict[str, Any]:
        cached = self.cached_content is not None
        config = settings_to_gemini(request.settings, tools=bool(request.tools) and not cached)
        config["http_options"] = http_options(request.settings, request.timeout(self.timeout))
        if cached:  # the cache holds the system instruction and the tools
            config["cached_content"] = self.cached_content
        else:
            if system is not None:
                config["system_instruction"] = system
            if request.tools:
                declarations = [
                    {
                        "name": t.name,
                        **({"description": t.description} if t.description else {}),
                        "parameters_json_schema": t.parameters,
                    }
                    for t in request.tools
                ]
                config["tools"] = [{"function_declarations": declarations}]
        if request.output is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.output.schema
        if self.include_thoughts:
            thinking = config.setdefault("thinking_config", {})
            if thinking.get("thinking_budget") != 0:
                thinking["include_thoughts"] = True
        if self.safety_settings is not None:
            config["safety_settings"] = self.safety_settings
        return config

    def _call(self, request: ModelRequest) -> dict[str, Any]:
        system, contents = messages_to_gemini(request.messages, model=self.name)
        return {"model": self.model, "contents": contents, "config": self._config(request, system)}

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send ``request`` (``generateContent``) and return the whole answer."""
        call = self._call(request)
        turn = _Turn(self)
        with self._translate(call["config"]["http_options"]["timeout"] / 1000):
            answer = await self._client().aio.models.generate_content(**call)
            turn.feed(answer)
        if turn.finish is None:
            raise ProviderResponseError(
                f"{self.name}: the answer has no candidate with a finish reason; the Gemini API "
                "always sends one"
            )
        return turn.response()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` (``streamGenerateContent``, SSE) and yield its events as they come.

        Text deltas, thought summary deltas (as ``"reasoning"`` events, also kept for the final
        message's reasoning) and tool calls (Gemini sends each call whole) come as they arrive.
        A stream that ends without a finish reason raises instead of returning a partial answer.
        """
        call = self._call(request)
        turn = _Turn(self)
        with self._translate(call["config"]["http_options"]["timeout"] / 1000, turn):
            chunks = await self._client().aio.models.generate_content_stream(**call)
            async for chunk in chunks:
                for event in turn.feed(chunk):
                    yield event
        if turn.finish is None:
            raise ProviderResponseError(
                f"{self.name}: the stream ended after {turn.chunks} events without a finish "
                "reason; the answer is incomplete",
                retryable=True,
            )
        yield StreamEvent("done", response=turn.response())

    # ------------------------------------------------------------------ errors

    @contextmanager
    def _translate(self, timeout: float, turn: _Turn | None = None) -> Iterator[None]:
        """Every SDK, HTTP and auth failure inside as an agentkit ProviderError."""
        try:
            yield
        except AgentkitError:
            raise
        except Exception as exc:  # nothing of the SDK's may leak: every failure is mapped
            error = self._error(exc, timeout, turn.chunks if turn else 0)
            raise error from error.__cause__  # none when it quotes the key

    def _error(self, exc: Exception, timeout: float, chunks: int) -> ProviderError:
        """``exc`` (any SDK failure) as agentkit's error, caused by it, the API key masked."""
        key = str(self._options.get("api_key") or "")
        return hide_secret(self._mapped(exc, timeout, chunks), key, exc)

    def _mapped(self, exc: Exception, timeout: float, chunks: int) -> ProviderError:
        from google.auth.exceptions import GoogleAuthError
        from google.genai import errors
        from pydantic import ValidationError

        if isinstance(exc, errors.APIError):
            return self._http_error(exc)
        if isinstance(exc, (errors.UnknownApiResponseError, ValidationError, JSONDecodeError)):
            what = "a stream event" if chunks else "the answer"
            return ProviderResponseError(
                f"{self.name}: {what} is not what the Gemini API sends ({_first_line(exc)})"
            )
        if _httpx_error(exc, "TimeoutException"):
            return ModelDeadlineExceeded(
                f"{self.name}: no answer within {timeout:g} s, the client's timeout "
                f"({type(exc).__name__}); raise GeminiModel(timeout=) or settings['timeout']",
                deadline=timeout,
            )
        if _httpx_error(exc, "TransportError"):
            what = f"{type(exc).__name__}: {exc}"
        elif isinstance(exc, GoogleAuthError):
            return ProviderError(
                f"{self.name}: Google credentials failed ({type(exc).__name__}: "
                f"{_first_line(exc)}); pass api_key= or set up application default credentials"
            )
        else:
            return ProviderError(
                f"{self.name}: the google-genai SDK failed: {type(exc).__name__}: "
                f"{_first_line(exc)}"
            )
        if chunks:
            return ProviderError(
                f"{self.name}: the connection dropped mid-stream after {chunks} events ({what}); "
                "the answer is incomplete",
                retryable=True,
            )
        return ProviderError(f"{self.name}: the request failed: {what}", retryable=True)

    def _http_error(self, exc: Any) -> ProviderHTTPError:
        status = int(exc.code or 0)
        provider_message = str(exc.message or exc.status or "").strip()[:500]
        hint = {
            400: " (check the request and the API key)" if "API key" in provider_message else "",
            401: " (check GEMINI_API_KEY / GOOGLE_API_KEY or api_key=)",
            403: " (check the API key's or credentials' permissions)",
            404: " (check the model name)",
        }.get(status, "")
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        return ProviderHTTPError(
            f"{self.name}: HTTP {status} {exc.status or ''}: {provider_message}{hint}".replace(
                "  ", " "
            ),
            status=status,
            provider_message=provider_message,
            retryable=status in RETRYABLE_STATUSES or status >= 500,
            retry_after=retry_after(headers, exc.details),
        )


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def retry_after(headers: Any, details: Any) -> float | None:
    """Seconds to wait before another attempt, or None.

    The ``Retry-After`` header (seconds) when there is one, else the error body's
    ``google.rpc.RetryInfo`` ``retryDelay`` (``"37s"``, ``"1.5s"``), as Gemini's 429 carries it.
    """
    value = headers.get("retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
    error = details.get("error", details) if isinstance(details, dict) else {}
    for detail in (error.get("details") if isinstance(error, dict) else None) or ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _httpx_error(exc: Exception, name: str) -> bool:
    """Whether ``exc`` is httpx's (or httpx2's, which newer SDKs use) exception class ``name``."""
    return any(
        c.__name__ == name and c.__module__.split(".")[0] in ("httpx", "httpx2")
        for c in type(exc).__mro__
    )


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def _part(part: Any) -> dict[str, Any]:
    """An SDK ``Part`` in the dict form the assembler reads (only the fields it reads)."""
    out: dict[str, Any] = {}
    if part.text is not None:
        out["text"] = part.text
    if part.thought:
        out["thought"] = True
    if part.thought_signature:
        out["thought_signature"] = part.thought_signature
    call = part.function_call
    if call is not None:
        out["function_call"] = {"id": call.id, "name": call.name, "args": call.args}
    return out


class _Turn:
    """One answer being read from the SDK's responses: one for ``request()``, many streamed."""

    def __init__(self, model: GeminiModel) -> None:
        self.model = model
        self.assembler = Assembler(model.name)
        self.usage: Usage | None = None
        self.finish: str | None = None
        self.finish_message: str | None = None
        self.version: str | None = None
        self.chunks = 0

    def feed(self, answer: Any) -> list[StreamEvent]:
        """Read one response; the events its parts show, in order."""
        self.chunks += 1
        where = f"stream event {self.chunks}: " if self.chunks > 1 else ""
        self.version = answer.model_version or self.version
        if answer.usage_metadata is not None:
            self.usage = usage_from_gemini(answer.usage_metadata.model_dump(exclude_none=True))
        feedback = answer.prompt_feedback
        if not answer.candidates:
            if feedback is not None and feedback.block_reason is not None:
                raise self._blocked(str(feedback.block_reason.value), "prompt", feedback)
            return []
        candidate = answer.candidates[0]
        out: list[StreamEvent] = []
        parts = candidate.content.parts if candidate.content is not None else None
        try:
            for i, part in enumerate(parts or ()):
                event = self.assembler.feed(_part(part), f"{where}candidates[0].parts[{i}]")
                if event is not None:
                    out.append(event)
        except ValueError as exc:
            raise ProviderResponseError(f"{self.model.name}: {exc}") from exc
        if candidate.finish_reason is not None:
            self.finish = str(candidate.finish_reason.value)
            self.finish_message = candidate.finish_message
            if not self.assembler.text and not self.assembler.calls:
                self._refuse_empty(candidate)
        return out

    def _refuse_empty(self, candidate: Any) -> None:
        reason = self.finish or ""
        if reason in SAFETY_FINISH:
            raise self._blocked(reason, "answer", candidate)
        if reason not in ("STOP", "MAX_TOKENS"):
            raise ProviderResponseError(
                f"{self.model.name}: the answer stopped with {reason} and no content"
                + (f": {self.finish_message}" if self.finish_message else ""),
                retryable=True,
            )

    def _blocked(self, reason: str, where: str, holder: Any) -> GeminiBlockedError:
        ratings = [
            f"{r.category.value if r.category else '?'} rated "
            f"{r.probability.value if r.probability else '?'}"
            for r in (holder.safety_ratings or ())
            if r.blocked or where == "prompt"
        ]
        detail = f" ({', '.join(ratings)})" if ratings else ""
        what = "the prompt was blocked" if where == "prompt" else "the answer was stopped"
        return GeminiBlockedError(
            f"{self.model.name}: {what} by Gemini's filters: {reason}{detail}; rephrase the "
            "request, or adjust GeminiModel(safety_settings=) where the category allows it",
            reason=reason,
            where=where,
        )

    def response(self) -> ModelResponse:
        message: Message = self.assembler.message()
        return ModelResponse(
            message=message,
            usage=self.usage or Usage(requests=1),
            finish_reason=finish_reason(self.finish, calls=bool(message.tool_calls)),
            model=self.version or self.model.model,
        )
