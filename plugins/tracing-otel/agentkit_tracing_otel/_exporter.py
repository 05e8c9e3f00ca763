"""agentkit spans as OpenTelemetry spans, named and attributed by the GenAI semantic conventions.

Each agentkit span becomes one OpenTelemetry span, at the same wall-clock times: a run's starts
when the run does, a turn's when the turn does (its model call comes); any other's when
something starts under it (so children find their parent), else whole at its end. Runs are
``invoke_agent {agent}``, model calls ``chat {model}``, tool calls ``execute_tool {tool}``;
turns, verdicts, guardrail checks and folds keep agentkit's names. A span started before it
knows what it acts on (a model call learns its model when it answers) starts under the name
its run's last one ended with and is renamed at its end if that was not it.
Attributes are the ones core hands exporters under
OpenTelemetry's names (``Span.genai_attributes``: ``gen_ai.*`` for the model, token usage, tool
name and call id, ``agentkit.<key>`` for every other), passed on as they are; the plugin adds
the operation, the provider and the conversation: the session's id when the run records one,
else the run's id. Attributes and error messages are the ones core exports: capped in size,
and what a person or the model wrote withheld once the run is secret-tainted.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
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
from ._environment import check_provider_environment
from ._environment import flag

#: The variable (OpenTelemetry's GenAI instrumentations use it too) that opts in to recording
#: prompts, answers, tool arguments and tool results.
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

#: What a content attribute holds in place of a value the encoder refuses.
UNRECORDABLE = "…[not recorded: nested too deep, or holding itself]"


def _content(value: Any) -> str:
    """``value`` as JSON; one nested past the encoder's limit (255 levels) as a marker.

    A model's tool arguments nested 300 deep raised here, and the exporter was detached from
    the run: the call's span and every later one were never ended or exported.
    """
    try:
        data = agentkit_core.plugin.jsonable(value)
    except ValueError:
        data = UNRECORDABLE
    return _utf8(json.dumps(data, ensure_ascii=False))


def _utf8(text: str) -> str:
    r"""``text`` with each lone surrogate written as its escape (``\ud800``), else as it is.

    OTLP sends text as UTF-8, which has no lone surrogates: the SDK dropped a span named by a
    model's tool name holding one, and a content attribute holding one (a tool's broken
    text). Inside JSON the escape reads back as the surrogate itself.
    """
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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


class _Run:
    """What an open run's spans share, worked out once per run, not once per span."""

    __slots__ = ("conversation", "encoded", "extras", "named", "provider")

    def __init__(self, conversation: str | None) -> None:
        #: its gen_ai.conversation.id (the session's id, else the run's), and the
        #: gen_ai.provider.name of its first model call that said one
        self.conversation = conversation
        self.provider: str | None = None
        #: span name -> the name the run's last span of it that started unnamed ended with
        self.named: dict[str, str] = {}
        #: id(message) -> (message, its JSON): a request repeats the transcript so far, whose
        #: messages are frozen, so each is encoded once per run, not once per call
        self.encoded: dict[int, tuple[Any, str]] = {}
        #: (provider, model) of a model call as core made its attributes -> what it adds to
        #: them (its conversation and provider): the same each call while ``provider`` stays
        self.extras: dict[tuple[object, object], dict[str, Any]] = {}


class OTelExporter(SpanExporter):
    """Hands every span of a run to an OpenTelemetry tracer.

    ``tracer_provider`` defaults to the global one (what the application or
    :func:`from_environment` set up). ``capture_content`` records prompts, answers, tool
    arguments and results as ``gen_ai.input.messages``, ``gen_ai.output.messages``,
    ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``; None reads
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``. A secret-tainted span never carries
    content, whatever this says.
    """

    genai = True  # it reads Span.genai_attributes: core makes them where it sets them

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool | None = None) -> None:
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self.tracer = provider.get_tracer("agentkit", agentkit_core.__version__)
        self.capture_content = flag(CAPTURE_ENV) if capture_content is None else capture_content
        # span id -> the open OpenTelemetry span (dict operations are atomic: no lock needed)
        self._live: dict[str, Any] = {}
        # run id -> what its spans share, while the run is open
        self._runs: dict[str | None, _Run] = {}
        # span ids of the traces the provider's sampler dropped: their spans cost a set lookup
        self._dropped: set[str] = set()
        # span id -> the context its children start in (made for the first), while it is open
        self._contexts: dict[str | None, Any] = {}  # looked up by a parent id, None or not
        # ids of open spans that started without what their name ends with (see _name)
        self._unnamed: set[str] = set()
        # span id -> a span under another not yet started in OpenTelemetry (see on_start)
        self._waiting: dict[str, Span] = {}

    def on_start(self, span: Span) -> bool | None:
        """Start its OpenTelemetry span; False for a run the tracer provider's sampler drops.

        The sampler (``OTEL_TRACES_SAMPLER``, or the provider's ``sampler=``) is asked once, at
        a trace's root: a run it drops is detached from this exporter (no more calls for its
        spans); a span it drops under a recorded one is skipped with its subtree. A turn is
        started at once, named by its number; any other span under another is started in
        OpenTelemetry when something starts under it, else at its end, whole (see :meth:`on_end`).
        """
        name = span.name
        if name == "turn":  # the agent loop's: a model call comes under it, so it starts now
            context = self._contexts.get(span.parent_id)
            number = span.attributes.get("turn")
            if context is not None and type(number) is int:  # under a started span, numbered
                otel = self.tracer.start_span(
                    f"turn {number}", context=context, start_time=span.start_ns
                )
                if not otel.is_recording():  # a sampler that decides per span dropped it
                    self._dropped.add(span.span_id)
                    return None
                span_id = span.span_id
                self._live[span_id] = otel
                self._contexts[span_id] = set_span_in_context(otel)  # for that model call
                return None
        elif name != "run" and span.parent_id:
            # under a span the sampler dropped, it is found so when it or its first child starts
            self._waiting[span.span_id] = span
            return None
        return self._begin(span)  # a run (its own trace, or a child run's), or a turn not as above

    def _begin(self, span: Span) -> bool | None:
        """Start ``span``'s OpenTelemetry span now: a run, or a span something started under."""
        shape = _SHAPES.get(span.name) or _Shape(span.name)
        parent_id = span.parent_id
        context = None
        if parent_id:
            context = self._contexts.get(parent_id) or self._context(parent_id)
            if context is None and parent_id in self._dropped:  # dropped when it began
                if shape.run:
                    return False
                self._dropped.add(span.span_id)
                return None
        title = shape.prefix
        if shape.key is not None:
            value = span.attributes.get(shape.key, "")
            if type(value) is int:  # a turn's number (see _Shape.name)
                title = f"{title} {value}"
            elif value == "":  # it learns what it acts on later (a model call: its model)
                self._unnamed.add(span.span_id)
                run = self._runs.get(span.run_id)
                if run is not None:  # as its run's last one was: renamed at its end if not so
                    title = run.named.get(span.name, title)
            else:
                title = shape.name(span, span.attributes)
        otel = self.tracer.start_span(
            title,
            context=context,
            kind=shape.kind,
            start_time=span.start_ns,
            attributes=shape.start,
        )
        if not otel.is_recording():  # the sampler's answer, asked once per trace, at its root
            if shape.run:
                return False
            self._dropped.add(span.span_id)
            return None
        if shape.run:
            self._contexts[span.span_id] = set_span_in_context(otel)  # its turns start at once
            if span.run_id:
                self._runs[span.run_id] = _Run(
                    _kept(
                        span.exported_attributes().get("session_id"), span.attributes, "session_id"
                    )
                    or span.run_id
                )
        self._live[span.span_id] = otel
        return None

    def _context(self, parent_id: str) -> Any:
        """The context the first child of ``parent_id`` starts in (None: no open parent of ours).

        A parent still waiting (see :meth:`on_start`) is started now, at its own start time.
        """
        parent = self._live.get(parent_id)
        if parent is None:
            waiting = self._waiting.pop(parent_id, None) if self._waiting else None
            if waiting is None or self._begin(waiting) is not None:
                return None
            parent = self._live.get(parent_id)
            if parent is None:  # the sampler dropped it
                return None
        context = self._contexts[parent_id] = set_span_in_context(parent)
        return context

    def on_end(self, span: Span) -> None:
        """End its OpenTelemetry span, or make it whole now if nothing started under it.

        A whole span's final name and every attribute go in one ``start_span`` (the SDK's
        cheapest way: no rename, no second call for the attributes); its times are its own.
        """
        waiting = self._waiting
        if waiting and waiting.pop(span.span_id, None) is not None:  # whole: a model call, ...
            context = self._contexts.get(span.parent_id)  # its parent started, as a rule
            if context is None:
                parent_id = span.parent_id or ""  # a span waits only under another
                context = self._context(parent_id)
                if context is None and parent_id in self._dropped:
                    return
            try:  # its shape, and a tool's or a model's name: seen before, as a rule
                shape = _SHAPES[span.name]
                title = shape.titles[span.attributes.get(shape.key)]  # type: ignore[arg-type]
            except (KeyError, TypeError):  # not seen, or not text (a span named by none: None)
                shape = _SHAPES.get(span.name) or _Shape(span.name)
                title = shape.name(span, span.attributes)
            genai = span.genai  # core's own mapping (a model or tool call's): no error, untainted
            if genai is None or self.capture_content:
                attributes = self._attributes(span, shape)
            elif shape.conversation:
                attributes = self._model_call(span, genai)
            else:
                attributes = genai
            otel = self.tracer.start_span(
                title,
                context=context,
                kind=shape.kind,
                start_time=span.start_ns,
                attributes=attributes,
            )
        else:
            otel = self._live.pop(span.span_id, None)
            if otel is None:
                self._dropped.discard(span.span_id)
                return
            self._contexts.pop(span.span_id, None)  # a started span has one, as a rule
            if span.name == "turn" and span.error is None:
                attributes = span.attributes
                number = attributes.get("turn")
                if type(number) is int and len(attributes) == 1:  # the agent loop's, as it began
                    otel.set_attributes({"agentkit.turn": number})
                    otel.end(end_time=span.end_ns)
                    return
            shape = _SHAPES.get(span.name) or _Shape(span.name)
            unnamed = self._unnamed
            if unnamed and span.span_id in unnamed:
                unnamed.discard(span.span_id)
                self._name(span, shape, otel)
            if shape.conversation or self.capture_content or span.error is not None:
                attributes = self._attributes(span, shape)
            else:  # a turn's, as a rule: core's as they are (see _attributes)
                attributes = span.genai_attributes()
            if shape.run:
                self._runs.pop(span.run_id, None)
            if attributes:
                otel.set_attributes(attributes)
        if span.error is not None:
            otel.set_status(Status(StatusCode.ERROR, span.exported_error()))
        otel.end(end_time=span.end_ns)

    def _attributes(self, span: Span, shape: _Shape) -> Mapping[str, Any]:
        """The OpenTelemetry attributes ``span`` ends with: core's (``Span.genai_attributes``).

        Passed on as they are when nothing is added to them: the SDK copies what it keeps.
        """
        content = self.capture_content and not span.tainted
        genai = span.genai_attributes(content=content)
        if not (shape.conversation or content or span.error is not None):
            return genai
        own = span.genai
        made = genai is own  # core's own mapping: the values as they are
        if own is not None and made and not content and span.error is None and not shape.run:
            return self._model_call(span, own)
        attributes = {**genai}
        if shape.conversation:
            self._conversation_and_provider(span, attributes, made)
        if content:
            cache = self._run(span.run_id).encoded
            attributes.update(_content_attributes(span, lambda m: _encoded_list(m, cache)))
        if span.error is not None:
            attributes["error.type"] = span.error_type or "error"
            if span.error_plugin:
                attributes["agentkit.error.plugin"] = span.error_plugin
        return attributes

    def _model_call(self, span: Span, genai: dict[str, Any]) -> dict[str, Any]:
        """A model call's attributes as core made them, with its conversation and provider.

        Those two are the same for every call of a run to the same provider and model: worked
        out for the first (see :meth:`_conversation_and_provider`), then added as they are.
        """
        run = self._runs.get(span.run_id) or self._run(span.run_id)
        key = (genai.get("agentkit.provider"), genai["gen_ai.request.model"])  # core's has one
        extra = run.extras.get(key)
        if extra is not None:
            return genai | extra
        attributes = {**genai}
        self._conversation_and_provider(span, attributes, True)
        if len(run.extras) < _KEPT:
            run.extras[key] = {k: attributes[k] for k in _EXTRA if k in attributes}
        return attributes

    def _name(self, span: Span, shape: _Shape, otel: Any) -> None:
        """Name ``otel`` now that ``span`` knows what it acted on (a model call, its model).

        It started under the name its run's last span of that kind ended with (or its bare
        prefix): renaming costs the SDK a lock and an update, and the model seldom changes.
        """
        title = shape.name(span, span.attributes)
        if title != getattr(otel, "name", None):
            otel.update_name(title)
        self._run(span.run_id).named[span.name] = title

    def _run(self, run_id: str | None) -> _Run:
        """What ``run_id``'s spans share (made now for a run whose start this did not see)."""
        run = self._runs.get(run_id)
        if run is None:
            run = self._runs[run_id] = _Run(run_id)
        return run

    def _conversation_and_provider(
        self, span: Span, attributes: dict[str, Any], as_they_are: bool
    ) -> None:
        """``gen_ai.conversation.id`` and ``gen_ai.provider.name`` of a run or model call.

        A model call's provider is its ``provider`` attribute (the model string's prefix, which
        core's tracing puts there), else the prefix of its ``model``; the run's is its model
        calls' (the first one's), known by the time the run ends. Both are kept per run. Read
        from the exported ``attributes``, only when exported as they are (not withheld, not cut):
        ``as_they_are`` says they all are.
        """
        run = self._runs.get(span.run_id) or self._run(span.run_id)
        if run.conversation:
            attributes["gen_ai.conversation.id"] = run.conversation
        given = attributes.get("agentkit.provider")
        model = attributes.get("gen_ai.request.model", attributes.get("agentkit.model"))
        if not as_they_are:
            raw = span.attributes
            given, model = _kept(given, raw, "provider"), _kept(model, raw, "model")
        elif type(given) is not str:  # a number a plugin put there
            given = None
        provider = provider_name(given, model)
        if provider:
            if run.provider is None and span.name == "model_call":
                run.provider = provider
                run.extras.clear()  # a call that said none says this one's from now on
        else:
            provider = run.provider
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


def _kept(value: object, raw: Mapping[str, Any], key: str) -> str | None:
    """``value`` (the exported ``key``) when it is text exported as it is: not withheld, not cut."""
    return value if isinstance(value, str) and value and value == raw.get(key) else None


#: What the plugin adds to a model call's attributes (see OTelExporter._model_call).
_EXTRA = ("gen_ai.conversation.id", "gen_ai.provider.name")

_CLIENT = trace.SpanKind.CLIENT
_INTERNAL = trace.SpanKind.INTERNAL

#: Spans whose name says what they act on: the name's start and the attribute that ends it.
_TITLES: dict[str, tuple[str, str | None]] = {
    "run": ("invoke_agent", "agent"),
    "model_call": ("chat", "model"),
    "tool_call": ("execute_tool", "tool"),
    "turn": ("turn", "turn"),
}


class _Shape:
    """What an agentkit span of one name becomes: OpenTelemetry name, kind, start attributes.

    One per span name, made on first sight (its attributes' names are core's: see
    ``Span.genai_attributes``).
    """

    __slots__ = ("conversation", "key", "kind", "prefix", "run", "start", "titles")

    def __init__(self, name: str) -> None:
        self.prefix, self.key = _TITLES.get(name, (name, None))
        self.kind = _CLIENT if name == "model_call" else _INTERNAL
        # what a span starts with: its operation, as core names it (the start of an empty one's)
        self.start: dict[str, Any] | None = dict(Span(name).genai_attributes()) or None
        self.run = name == "run"
        self.conversation = name in ("run", "model_call")
        # a text value of the attribute that ends the name -> the name, once seen; None -> the
        # prefix, for a name no attribute ends (a lookup with no key gets None)
        self.titles: dict[object, str] = {} if self.key else {None: self.prefix}
        if len(_SHAPES) < _KEPT:
            _SHAPES[name] = self

    def title(self, span: Span, attributes: Mapping[str, Any]) -> str:
        """The span's OpenTelemetry name from ``attributes`` (its raw ones, or exported ones).

        A raw value not surely exported as it is (long text, a list) is read exported.
        """
        if self.key is None:
            return self.prefix
        value = attributes.get(self.key, "")
        if type(value) is not int and (type(value) is not str or len(value) > _SHORT):
            value = span.exported_attributes().get(self.key, "")
        title = f"{self.prefix} {value}".strip() if value != "" else self.prefix
        title = _utf8(title)
        if type(value) is str and len(self.titles) < _KEPT:  # tool and model names recur
            self.titles[value] = title
        return title

    def name(self, span: Span, attributes: Mapping[str, Any]) -> str:
        """:meth:`title`, for a name of a number (a turn's) or a text seen before, at once."""
        value = attributes.get(self.key or "", "")
        if type(value) is int:
            return f"{self.prefix} {value}"
        title = self.titles.get(value) if type(value) is str else None
        return self.title(span, attributes) if title is None else title


_SHAPES: dict[str, _Shape] = {}
#: A raw text this long is surely exported as it is (core caps at 4,096 characters).
_SHORT = 256
#: The most span names, and attribute keys per span name, remembered: names made up at run
#: time (a key per item, say) are worked out each time rather than kept without bound.
_KEPT = 512


def _content_attributes(span: Span, messages: Any) -> dict[str, Any]:
    """``span``'s payload as attributes; ``messages(list)`` encodes a list of messages.

    Content attributes (``question``) come with core's (``Span.genai_attributes``).
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
    if flag("OTEL_SDK_DISABLED"):
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
    check_provider_environment(names)
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
