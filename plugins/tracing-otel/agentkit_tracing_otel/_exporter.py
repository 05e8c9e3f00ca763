"""agentkit spans as OpenTelemetry spans, named and attributed by the GenAI semantic conventions.

Each agentkit span becomes one OpenTelemetry span when it starts (so children find their
parent) and ends with it, at the same wall-clock times. Runs are ``invoke_agent {agent}``,
model calls ``chat {model}``, tool calls ``execute_tool {tool}``; turns, verdicts, guardrail
checks and folds keep agentkit's names. A span is named when it starts; one that does not know
then what it acts on (a model call learns its model when it answers) is renamed at its end.
Every agentkit attribute rides along as
``agentkit.<key>``; ``gen_ai.*`` attributes say the operation, provider, model, token usage,
tool name and call id, and the conversation: the session's id when the run records one, else
the run's id. Attributes and error messages are the ones core exports
(``Span.exported_attributes``): capped in size, and what a person or the model wrote withheld
once the run is secret-tainted.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status
from opentelemetry.trace import StatusCode
from opentelemetry.trace import set_span_in_context

import agentkit_core
import agentkit_core.plugin
from agentkit_core import ConfigError
from agentkit_core.plugin import Span
from agentkit_core.plugin import SpanExporter

from ._environment import ENDPOINT_ENVS

#: The variable (OpenTelemetry's GenAI instrumentations use it too) that opts in to recording
#: prompts, answers, tool arguments and tool results.
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

#: agentkit attributes that quote what a person or the model wrote: content, opt-in only.
_CONTENT_ATTRIBUTES = frozenset({"question"})

_TRUE = ("1", "true", "yes", "on")


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def _value(value: Any) -> Any:
    """``value`` as an OpenTelemetry attribute value (a scalar, a list of one scalar type)."""
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple) and (
        all(isinstance(v, str) for v in value)
        or all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return value  # as it is: the SDK keeps a copy of its own
    return json.dumps(agentkit_core.plugin.jsonable(value), ensure_ascii=False)


def _content(value: Any) -> str:
    return json.dumps(agentkit_core.plugin.jsonable(value), ensure_ascii=False)


def _encoded_list(messages: Any, cache: dict[int, tuple[Any, str]]) -> str:
    """``messages`` as a JSON list, each message's JSON taken from ``cache`` or added to it."""
    parts = []
    for message in messages:
        hit = cache.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, _content(message))
            cache[id(message)] = hit
        parts.append(hit[1])
    return "[" + ",".join(parts) + "]"


class OTelExporter(SpanExporter):
    """Hands every span of a run to an OpenTelemetry tracer.

    ``tracer_provider`` defaults to the global one (what the application or
    :func:`from_environment` set up). ``capture_content`` records prompts, answers, tool
    arguments and results as ``gen_ai.input.messages``, ``gen_ai.output.messages``,
    ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``; None reads
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``. A secret-tainted span never carries
    content, whatever this says.
    """

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool | None = None) -> None:
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self.tracer = provider.get_tracer("agentkit", agentkit_core.__version__)
        self.capture_content = _flag(CAPTURE_ENV) if capture_content is None else capture_content
        # span id -> the open OpenTelemetry span (dict operations are atomic: no lock needed)
        self._live: dict[str, Any] = {}
        # run id -> id(message) -> (message, its JSON): a request repeats the transcript so
        # far, whose messages are frozen, so each is encoded once per run, not once per call
        self._encoded: dict[str | None, dict[int, tuple[Any, str]]] = {}
        # run id -> its gen_ai.conversation.id and gen_ai.provider.name, while the run is open
        self._conversation: dict[str | None, str] = {}
        self._provider: dict[str | None, str] = {}
        # span ids of the traces the provider's sampler dropped: their spans cost a set lookup
        self._dropped: set[str] = set()
        # span id -> the context its children start in (made for the first), while it is open
        self._contexts: dict[str, Any] = {}

    def on_start(self, span: Span) -> bool | None:
        """Start its OpenTelemetry span; False for a run the tracer provider's sampler drops.

        The sampler (``OTEL_TRACES_SAMPLER``, or the provider's ``sampler=``) is asked once, at
        a trace's root: a run it drops is detached from this exporter (no more calls for its
        spans); a span it drops under a recorded one is skipped with its subtree.
        """
        dropped = self._dropped
        if dropped and span.parent_id in dropped:  # under a span the sampler dropped: so is this
            if span.name == "run":  # a child run's own trace: nothing of it reaches us
                return False
            dropped.add(span.span_id)
            return None
        shape = _SHAPES.get(span.name) or _Shape(span.name)
        parent_id = span.parent_id
        otel = self.tracer.start_span(
            shape.title(span, span.attributes),
            context=self._context(parent_id) if parent_id else None,
            kind=shape.kind,
            start_time=span.start_ns,
            attributes=shape.start,
        )
        if not otel.is_recording():  # the sampler's answer, asked once per trace, at its root
            if shape.run:
                return False
            dropped.add(span.span_id)
            return None
        if shape.run and span.run_id:
            self._conversation[span.run_id] = (
                _kept(span, span.exported_attributes(), "session_id") or span.run_id
            )
        self._live[span.span_id] = otel
        return None

    def _context(self, parent_id: str) -> Any:
        """The context a child of ``parent_id`` starts in (None: no open parent of ours)."""
        context = self._contexts.get(parent_id)
        if context is None:
            parent = self._live.get(parent_id)
            if parent is not None:
                context = self._contexts[parent_id] = set_span_in_context(parent)
        return context

    def on_end(self, span: Span) -> None:
        otel = self._live.pop(span.span_id, None)
        if otel is None:
            self._dropped.discard(span.span_id)
            return
        contexts = self._contexts
        if contexts:
            contexts.pop(span.span_id, None)
        shape = _SHAPES.get(span.name) or _Shape(span.name)
        exported = _exported(span)
        if shape.key is not None and getattr(otel, "name", None) == shape.prefix:
            otel.update_name(shape.title(span, exported))  # it learnt what it acts on
        attributes = shape.attributes(exported, exported is span.attributes)
        if shape.conversation:
            self._conversation_and_provider(span, exported, attributes)
        if self.capture_content and not span.tainted:
            cache = self._encoded.setdefault(span.run_id, {})
            attributes.update(
                _content_attributes(span, exported, lambda m: _encoded_list(m, cache))
            )
        if shape.run:
            self._encoded.pop(span.run_id, None)
            self._conversation.pop(span.run_id, None)
            self._provider.pop(span.run_id, None)
        if span.error is not None:
            attributes["error.type"] = span.error_type or "error"
            if span.error_plugin:
                attributes["agentkit.error.plugin"] = span.error_plugin
            otel.set_status(Status(StatusCode.ERROR, span.exported_error()))
        otel.set_attributes(attributes)
        otel.end(end_time=span.end_ns)

    def _conversation_and_provider(
        self, span: Span, exported: dict[str, Any], attributes: dict[str, Any]
    ) -> None:
        """``gen_ai.conversation.id`` and ``gen_ai.provider.name`` of a run or model call.

        A model call's provider is its ``provider`` attribute (the model string's prefix, which
        core's tracing puts there), else the prefix of its ``model``; the run's is its model
        calls' (the first one's), known by the time the run ends.
        """
        run = span.run_id
        conversation = self._conversation.get(run, run)
        if conversation:
            attributes["gen_ai.conversation.id"] = conversation
        provider = provider_name(_kept(span, exported, "provider"), _kept(span, exported, "model"))
        if provider:
            if span.name == "model_call":
                self._provider.setdefault(run, provider)
        else:
            provider = self._provider.get(run)
        if provider:
            attributes["gen_ai.provider.name"] = provider

    def __repr__(self) -> str:
        return f"<OTelExporter capture_content={self.capture_content}>"


#: agentkit model-string prefixes whose GenAI semantic-conventions name differs from them.
PROVIDER_NAMES = {
    "openai-responses": "openai",
    "gemini": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "bedrock": "aws.bedrock",
    "azure": "azure.ai.openai",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "watsonx": "ibm.watsonx.ai",
}


def provider_name(provider: str | None, model: str | None = None) -> str | None:
    """The ``gen_ai.provider.name`` of a model call.

    ``provider`` is the prefix of the model string (``"openai"`` of ``"openai:gpt-4o-mini"``);
    without one, the prefix of ``model`` when it has one. A prefix the conventions spell
    differently is translated (``"gemini"`` is ``"gcp.gemini"``, see :data:`PROVIDER_NAMES`);
    any other is used as it is. None when neither says.
    """
    if not provider:
        provider = model.partition(":")[0] if model and ":" in model else None
    if not provider:
        return None
    return PROVIDER_NAMES.get(provider, provider)


def _kept(span: Span, exported: dict[str, Any], key: str) -> str | None:
    """The text attribute ``key`` when it is exported as it is (not withheld, not cut)."""
    value = exported.get(key)
    return value if isinstance(value, str) and value and value == span.attributes.get(key) else None


_CLIENT = trace.SpanKind.CLIENT
_INTERNAL = trace.SpanKind.INTERNAL

#: Spans whose name says what they act on: the name's start and the attribute that ends it.
_TITLES: dict[str, tuple[str, str | None]] = {
    "run": ("invoke_agent", "agent"),
    "model_call": ("chat", "model"),
    "tool_call": ("execute_tool", "tool"),
    "turn": ("turn", "turn"),
}

#: The attributes a span starts with: its GenAI operation.
_START: dict[str, dict[str, Any]] = {
    "run": {"gen_ai.operation.name": "invoke_agent"},
    "model_call": {"gen_ai.operation.name": "chat"},
    "model_attempt": {"gen_ai.operation.name": "chat"},
    "tool_call": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function"},
}

_TOOL: dict[str, tuple[str, ...]] = {
    "tool": ("gen_ai.tool.name",),
    "call_id": ("gen_ai.tool.call.id",),
}
_USAGE = {
    "input_tokens": ("gen_ai.usage.input_tokens",),
    "output_tokens": ("gen_ai.usage.output_tokens",),
    "cache_read_tokens": ("gen_ai.usage.cache_read.input_tokens",),
    "cache_write_tokens": ("gen_ai.usage.cache_creation.input_tokens",),
    "reasoning_tokens": ("gen_ai.usage.reasoning.output_tokens",),
}
#: Per span name, the agentkit attributes that become ``gen_ai.*`` ones (instead of
#: ``agentkit.<key>``). ``finish_reason`` becomes the list ``gen_ai.response.finish_reasons``.
_GENAI: dict[str, dict[str, tuple[str, ...]]] = {
    "run": {"agent": ("gen_ai.agent.name",), **_USAGE},
    "model_call": {
        "model": ("gen_ai.request.model", "gen_ai.response.model"),
        "finish_reason": ("gen_ai.response.finish_reasons",),
        **_USAGE,
    },
    # one model of a fallback chain tried (agentkit_core.FallbackModel): its model and tokens
    "model_attempt": {"model": ("gen_ai.request.model",), **_USAGE},
    "tool_call": _TOOL,
    "verdict": _TOOL,
    "guardrail": _TOOL,
}
_SCALARS = frozenset({str, bool, int, float})

#: How an attribute is recorded: as ``agentkit.<key>``, under its GenAI name(s), as a list of
#: one (``finish_reason``), or not at all (content: see :func:`_content_attributes`).
_AGENTKIT, _GEN, _LIST, _SKIP = range(4)

#: A text this long passes core's cap on exported strings (4,096 characters) as it is, and a list
#: of up to :data:`_FEW` such texts passes it too (whole lists are capped by their characters).
_SHORT = 256
_FEW = 8
_PLAIN = frozenset({int, float, bool, type(None)})


def _exported(span: Span) -> dict[str, Any]:
    """``span``'s attributes as exported (:meth:`Span.exported_attributes`).

    An untainted span whose every value is surely exported as it is (a number, a short text, a
    few short texts) is its own attributes, read, not copied: the common case, one loop.
    """
    attributes = span.attributes
    if span.tainted:
        return span.exported_attributes()
    for value in attributes.values():
        kind = type(value)
        if kind in _PLAIN or (kind is str and len(value) <= _SHORT):
            continue
        if (kind is list or kind is tuple) and len(value) <= _FEW:
            if all(type(item) is str and len(item) <= _SHORT for item in value):
                continue
        return span.exported_attributes()
    return attributes


class _Shape:
    """What an agentkit span of one name becomes: OpenTelemetry name, kind, start attributes.

    One per span name, made on first sight; each attribute key's OpenTelemetry name(s) are
    worked out once, on first sight too, so a span's export is one pass over its attributes.
    """

    __slots__ = ("conversation", "genai", "key", "kind", "names", "prefix", "run", "start")

    def __init__(self, name: str) -> None:
        self.prefix, self.key = _TITLES.get(name, (name, None))
        self.kind = _CLIENT if name == "model_call" else _INTERNAL
        self.start = _START.get(name)
        self.genai = _GENAI.get(name, {})
        self.run = name == "run"
        self.conversation = name in ("run", "model_call")
        self.names: dict[str, tuple[tuple[str, ...], int]] = {}
        if len(_SHAPES) < _KEPT:
            _SHAPES[name] = self

    def title(self, span: Span, attributes: dict[str, Any]) -> str:
        """The span's OpenTelemetry name from ``attributes`` (its raw ones, or exported ones).

        A raw value not surely exported as it is (long text, a list) is read exported.
        """
        if self.key is None:
            return self.prefix
        value = attributes.get(self.key, "")
        if type(value) is not int and (type(value) is not str or len(value) > _SHORT):
            value = span.exported_attributes().get(self.key, "")
        return f"{self.prefix} {value}".strip() if value != "" else self.prefix

    def attributes(self, exported: dict[str, Any], plain: bool = False) -> dict[str, Any]:
        """The OpenTelemetry attributes from the span's ``exported`` ones, content left out.

        ``plain``: every value is a number, a short text or a few (:func:`_exported`), which
        OpenTelemetry takes as it is.
        """
        names = self.names
        out: dict[str, Any] = {}
        for key, value in exported.items():
            if value is None:
                continue
            how = names.get(key)
            if how is None:
                how = self._how(key)
                if len(names) < _KEPT:
                    names[key] = how
            targets, kind = how
            if kind == _AGENTKIT:
                out[targets[0]] = value if plain or type(value) in _SCALARS else _value(value)
            elif kind == _GEN:
                value = value if type(value) in _SCALARS else str(value)
                for target in targets:
                    out[target] = value
            elif kind == _LIST:
                out[targets[0]] = [str(value)]
        return out

    def _how(self, key: str) -> tuple[tuple[str, ...], int]:
        if key in _CONTENT_ATTRIBUTES:
            return (), _SKIP
        targets = self.genai.get(key)
        if targets is None:
            return ("agentkit." + key,), _AGENTKIT
        return targets, _LIST if key == "finish_reason" else _GEN


_SHAPES: dict[str, _Shape] = {}
#: The most span names, and attribute keys per span name, remembered: names made up at run
#: time (a key per item, say) are worked out each time rather than kept without bound.
_KEPT = 512


def _content_attributes(span: Span, exported: dict[str, Any], messages: Any) -> dict[str, Any]:
    """``span``'s content as attributes; ``messages(list)`` encodes a list of messages.

    Content attributes among the ``exported`` ones (capped) come from there.
    """
    p = span.payload
    out: dict[str, Any] = {}
    if span.name == "model_call":
        if "request" in p:
            out["gen_ai.input.messages"] = messages(p["request"])
        if "response" in p:
            out["gen_ai.output.messages"] = messages([p["response"]])
    elif span.name == "tool_call":
        if "arguments" in p:
            out["gen_ai.tool.call.arguments"] = _content(p["arguments"])
        if "result" in p:
            out["gen_ai.tool.call.result"] = _content(p["result"])
    elif span.name == "run":
        if "task" in p:
            out["agentkit.task"] = _content(p["task"])
        if "output" in p:
            out["agentkit.output"] = _content(p["output"])
    elif span.name == "fold" and p.get("summary") is not None:
        out["agentkit.fold.summary"] = _content(p["summary"])
    for key in _CONTENT_ATTRIBUTES & exported.keys():
        out[f"agentkit.{key}"] = _value(exported[key])
    return out


_lock = threading.Lock()
_built: dict[str, Any] = {}


def from_environment() -> OTelExporter | None:
    """The exporter OpenTelemetry's own configuration asks for, or None when it asks for none.

    ``OTEL_SDK_DISABLED=true`` turns it off. An application that installed an SDK tracer
    provider gets its spans there. Otherwise one of ``OTEL_EXPORTER_OTLP_ENDPOINT``,
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``
    or ``none``) turns it on: a tracer provider is built once per process with the resource
    the ``OTEL_SERVICE_NAME``/``OTEL_RESOURCE_ATTRIBUTES`` variables describe, a batch
    processor (``OTEL_BSP_*``) and the OTLP/HTTP exporter (``OTEL_EXPORTER_OTLP_*``). With
    none of them set, nothing is exported and nothing is sent anywhere.
    """
    if _flag("OTEL_SDK_DISABLED"):
        return None
    current = trace.get_tracer_provider()
    if type(current).__module__.startswith("opentelemetry.sdk"):
        return OTelExporter(current)
    if not any(os.environ.get(name, "").strip() for name in ENDPOINT_ENVS):
        return None
    chosen = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    names = [n.strip() for n in chosen.split(",") if n.strip()]
    unknown = [n for n in names if n not in ("otlp", "console", "none")]
    if unknown:
        raise ConfigError(
            f"OTEL_TRACES_EXPORTER={chosen!r} names {', '.join(map(repr, unknown))}, which "
            "agentkit-tracing-otel does not know; use otlp (OTLP over HTTP), console or none",
            value=chosen,
            source="OTEL_TRACES_EXPORTER",
        )
    if names == ["none"] or not names:
        return None
    with _lock:
        key = ",".join(names) + "|" + "|".join(os.environ.get(n, "") for n in ENDPOINT_ENVS)
        provider = _built.get(key)
        if provider is None:
            provider = _provider([n for n in names if n != "none"])
            _built[key] = provider
    return OTelExporter(provider)


def _provider(names: list[str]) -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    provider = TracerProvider(resource=Resource.create())
    for name in names:
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        else:
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
    return provider
