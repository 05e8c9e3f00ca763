"""The Model seam: what a request to a model holds, what comes back, and the protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import Protocol
from typing import TypedDict
from typing import cast
from typing import runtime_checkable

from ._errors import ConfigError
from ._errors import ProviderError
from ._messages import JSONObject
from ._messages import JSONValue
from ._messages import Message
from ._messages import ToolCall
from ._messages import Usage
from ._records import quick_init
from ._records import record

if TYPE_CHECKING:
    from ._context import RunContext


#: How hard a reasoning model thinks before it answers.
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]


class ModelSettings(TypedDict, total=False):
    """Settings of a model request, every key optional; a provider maps each to its wire.

    Give them as ``settings=`` to an Agent, a Kit or one run (checked there: an unknown key or
    a value out of range is a ConfigError); a provider documents the keys it ignores.

    Keys:
        temperature: sampling temperature, 0 or more (providers cap it: 1 or 2).
        top_p: nucleus sampling, from 0 to 1.
        top_k: sample from the k likeliest tokens (providers without it ignore it).
        max_tokens: the most tokens the answer may take (max output tokens).
        stop: texts that end the answer when the model writes them.
        seed: a seed for providers that sample reproducibly.
        presence_penalty, frequency_penalty: penalties on repeated tokens.
        tool_choice: ``"auto"``, ``"none"``, ``"required"``, or the name of the one tool the
            model must call.
        parallel_tool_calls: whether the model may ask for several tool calls in one answer.
        reasoning_effort: how hard a reasoning model thinks (``"none"`` ... ``"xhigh"``).
        timeout: seconds each network wait of the call may take (the client's, not the
            server's).
        extra_body: provider extras, added to the request body as they are.
    """

    temperature: float
    top_p: float
    top_k: int
    max_tokens: int
    stop: Sequence[str]
    seed: int
    presence_penalty: float
    frequency_penalty: float
    tool_choice: str
    parallel_tool_calls: bool
    reasoning_effort: ReasoningEffort
    timeout: float
    extra_body: Mapping[str, JSONValue]


@record(frozen=True, slots=True)
class ToolSpec:
    """What a model is told about one tool: its name, description and JSON Schema parameters."""

    name: str
    description: str = ""
    parameters: JSONObject = field(default_factory=lambda: {"type": "object", "properties": {}})


@record(frozen=True, slots=True)
class OutputSchema:
    """A structured-output request: a JSON Schema the answer must satisfy."""

    name: str
    schema: JSONObject
    strict: bool = False


@quick_init
@record(frozen=True, slots=True)
class ModelRequest:
    """One call to a model. Middlewares pass on a changed copy (``dataclasses.replace``).

    ``messages`` is read as a sequence: in a run, a view of the transcript as it was when the
    request was made (:class:`TranscriptView`, not copied each turn), which behaves as the
    tuple of those messages; a middleware that changes them passes on a tuple or a list.
    ``ctx`` is the run the call belongs to (None outside a run); ``settings`` holds the
    request's :class:`ModelSettings` (``temperature``, ``max_tokens``...); ``metadata`` is for
    middlewares to talk to each other.
    """

    messages: Sequence[Message]
    tools: tuple[ToolSpec, ...] = ()
    output: OutputSchema | None = None
    settings: ModelSettings = field(default_factory=lambda: ModelSettings())
    ctx: RunContext | None = field(default=None, compare=False)
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    def timeout(self, default: float) -> float:
        """Seconds each network wait of this call may take.

        ``settings["timeout"]``, else ``default`` (a provider's own). Anything but a positive
        number is a ConfigError.
        """
        value = self.settings.get("timeout", default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ConfigError(
                f"settings['timeout'] must be a positive number of seconds, got {value!r}",
                value=value,
                source="ModelRequest.settings",
            )
        return float(value)


@quick_init
@record(frozen=True, slots=True)
class ModelResponse:
    """A model's answer: one assistant message, the usage it cost, and why it stopped."""

    message: Message
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    model: str | None = None
    #: Typed output, set by the ``output_coerce()`` middleware when the agent declares one.
    output: Any = None
    #: The name of the Model that answered (``"openai:gpt-4o-mini"``): the invoker's model, or
    #: the one of a fallback chain that answered. Set by the invoker, not by a provider.
    answered_by: str | None = field(default=None, compare=False)


def checked_model(model: object, where: str) -> Model:
    """``model`` given as ``where``: a Model, else a ConfigError, not an error at its first call."""
    if not isinstance(getattr(model, "name", None), str) or not callable(
        getattr(model, "request", None)
    ):
        raise ConfigError(
            f"{where} takes a Model (an object with a name and request()), a model string such "
            f"as 'openai:gpt-4o-mini', or a list of them; got {model!r:.200} "
            f"({type(model).__name__})",
            value=model,
            source=where,
        )
    return cast("Model", model)


def answered(response: ModelResponse, by: str) -> ModelResponse:
    """``response`` with ``answered_by=by``: what an invoker or a fallback chain stamps on it.

    ``dataclasses.replace`` costs five times as much, and every model call makes one; the
    fields are listed here, so tests/test_invoker.py holds this to ``ModelResponse``'s fields.
    """
    r = response
    return ModelResponse(r.message, r.usage, r.finish_reason, r.model, r.output, by)


def hide_secret(
    error: ProviderError, secret: str, cause: BaseException | None = None
) -> ProviderError:
    """``error`` (caused by ``cause``) with ``secret``, an API key, masked as ``***``.

    A server or proxy that echoes the request's headers in its error body would otherwise put
    the key in the message, ``provider_message``, a log line and a traceback's cause (an SDK's
    exception quotes the body). A provider raises what this returns, without ``from``: the
    cause is kept unless it holds the key. A secret under 8 characters is not masked (it would
    blank ordinary words).
    """
    if cause is not None:
        error.__cause__ = cause
    if len(secret) < 8:
        return error

    def masked(text: str) -> str:
        while secret in text:  # until none is left: a mask may close a new one ("a***" + ...)
            text = text.replace(secret, "***")
        return text

    error.args = tuple(masked(a) if isinstance(a, str) else a for a in error.args)
    for name, value in vars(error).items():
        if isinstance(value, str):
            setattr(error, name, masked(value))
    chained, depth = error.__cause__ or error.__context__, 0
    while chained is not None and depth < 32:  # an SDK's error quotes the body, the key too
        if secret in f"{chained!s}{chained!r}{getattr(chained, '__dict__', '')}":
            error.__cause__ = None
            error.__suppress_context__ = True
            break
        chained, depth = chained.__cause__ or chained.__context__, depth + 1
    return error


@quick_init
@record(frozen=True, slots=True)
class StreamEvent:
    """One event of a streamed answer.

    ``kind`` is ``"text"`` (``text`` holds the delta), ``"reasoning"`` (``text`` holds a delta
    of the model's reasoning: a thinking delta or a thought/reasoning summary delta, shown to the
    caller, never part of the answer's text; the whole reasoning is on the final message's
    ``metadata["reasoning"]``), ``"tool_call_delta"`` (a fragment of a call being written:
    ``tool_call`` holds its id, its name and the arguments' next characters; optional, for
    providers that stream them: the first as soon as the id and name are known, all before the
    call's ``"tool_call"``, their fragments joined equal to its ``arguments``), ``"tool_call"``
    (``tool_call`` holds a completed call), ``"partial"`` (``partial`` holds the typed output
    parsed so far) or ``"done"`` (``response`` holds the whole answer, always a model stream's
    last event).
    ``Agent.run_stream`` ends its stream with one ``"result"`` event (``result`` holds the
    ``AgentResult``). A consumer should pass over kinds it does not know: more may come.
    """

    kind: Literal["text", "reasoning", "tool_call_delta", "tool_call", "partial", "done", "result"]
    text: str = ""
    tool_call: ToolCall | None = None
    partial: object = None
    response: ModelResponse | None = None
    result: Any = None


#: ``ModelRequest.metadata`` key of a callback that receives the model's stream events; when it
#: is set, the invoker streams the call (``Agent.run_stream`` sets it on its own requests).
STREAM_SINK = "agentkit.stream_sink"


@runtime_checkable
class Model(Protocol):
    """A language model. ``name`` identifies it in traces (``"openai:gpt-4o-mini"``).

    ``request`` sends one request and returns the whole answer. ``stream`` yields
    :class:`StreamEvent`s and ends with exactly one ``"done"`` event carrying the same
    :class:`ModelResponse` that ``request`` would have returned. Both raise
    :class:`~agentkit_core.ProviderError` (with ``retryable`` set where a retry may help).
    A model may declare ``supports_structured_output: bool`` (class or instance attribute):
    True means it enforces ``ModelRequest.output`` itself, so the prompt needs no schema block.
    """

    name: str

    async def request(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...
