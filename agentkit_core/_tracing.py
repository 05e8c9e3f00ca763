"""Trace spans: runs, turns, model and tool calls, verdicts and folds, handed to span exporters.

Core keeps its own small span type so a run is traced with no tracing library installed; a
:class:`SpanExporter` (the ``tracing-otel`` plugin, ``agentkit run --trace``'s file, the CLI's
step lines) is told when each span starts and ends. A span's ``attributes`` are small facts
(names, counts, ids); its ``payload`` holds references to what was sent and received (messages,
arguments, results), which an exporter serializes only when it records content at all, and
never once the run is secret-tainted.

Some attributes quote what a person or the model wrote (a blocked URL, the tool names a model
asked for, a hook's reason). Exporters record attributes through one rule,
:func:`export_attributes`: an attribute is *safe* (a number, a flag, or a name in
:data:`SAFE_ATTRIBUTES`) or *text*, a tainted span's text attributes are withheld as its
payload is, and every string is capped at :data:`ATTRIBUTE_LIMIT` characters.
:meth:`Span.genai_attributes` hands the same attributes under OpenTelemetry's GenAI names.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from time import perf_counter
from time import time_ns
from types import MappingProxyType
from typing import TYPE_CHECKING
from typing import Any

from ._encoder import jsonable
from ._event_log import EventLog

if TYPE_CHECKING:
    from ._messages import JSONObject

_current: contextvars.ContextVar[Span | None] = contextvars.ContextVar(
    "agentkit_span", default=None
)

_log = logging.getLogger("agentkit.tracing")


#: Span ids drawn ahead: one read of the system's random source makes this many.
_ID_BATCH = 256
_ids: list[str] = []


def _new_id() -> str:
    """A fresh span id: 64 random bits as 16 hex digits, never handed out twice.

    Drawn :data:`_ID_BATCH` at a time (a system call per span was a tenth of a span's cost);
    ``list.pop`` hands each out once, also across threads, and a forked child draws its own.
    """
    try:
        return _ids.pop()
    except IndexError:
        raw = os.urandom(8 * _ID_BATCH).hex()
        _ids.extend([raw[i : i + 16] for i in range(16, len(raw), 16)])
        return raw[:16]


if hasattr(os, "register_at_fork"):  # a forked child never reuses its parent's ids
    os.register_at_fork(after_in_child=_ids.clear)


def _untainted() -> bool:
    return False


#: The most characters an exported attribute value (or a span's error) holds. A longer string is
#: cut to fit, a marker saying how much was cut in place of its end (a 5,000,000-character
#: reason keeps its first 4,064 and ``…[cut 4,995,936 chars]``); a longer list keeps the items
#: that fit and ends with ``…[cut N items]``. Long enough for any error message or reason a
#: person reads; a value past it is data that belongs in the payload.
ATTRIBUTE_LIMIT = 4096

#: What a secret-tainted span exports in place of a text attribute (each item, for a list).
WITHHELD = "(withheld: the run is secret-tainted)"

#: Attribute names that never hold what a person or a model wrote: ids, names from the agent's
#: own configuration (the agent, a registered tool, a plugin, a policy rule), and values from a
#: fixed vocabulary (a status, a decision, a finish reason). Numbers and booleans are safe under
#: any name. Every other attribute is text, withheld from a tainted span's export: an attribute
#: a plugin adds is text unless it is a number or a flag.
SAFE_ATTRIBUTES = frozenset(
    {
        "agent",
        "status",
        "pending",
        "model",
        "finish_reason",
        "tool_call_ids",
        "step",
        "tool",
        "call_id",
        "decision",
        "source",
        "rule",
        "guardrail",
        "hook",
        "plugin",
        "function",
        "provider",
        "session_id",
    }
)

#: Per span name, names safe elsewhere that this span fills from the model's own words: a
#: verdict is on the call the model asked for, whose name need not be any tool's.
_TEXT_ON: dict[str, frozenset[str]] = {"verdict": frozenset({"tool"})}
_NO_TEXT: frozenset[str] = frozenset()

#: Room kept at the end of a cut string for its marker (the longest count fits).
_MARK_ROOM = 32

_NUMBERS = (bool, int, float)
#: Value types exported as they are whatever their size (subclasses take the full rule).
_AS_IS = frozenset({bool, int, float, type(None)})


def export_attributes(
    name: str, attributes: Mapping[str, object], tainted: bool
) -> Mapping[str, Any]:
    """The attributes of a span called ``name`` as an exporter may record them.

    Numbers, flags and None pass as they are. When ``tainted``, every text attribute (see
    :data:`SAFE_ATTRIBUTES`) becomes :data:`WITHHELD`, item by item for a list, so a
    secret a person answered cannot ride out in a URL, a tool name or a reason. Every other
    value is capped at :data:`ATTRIBUTE_LIMIT`. A reader may apply it again to spans it reads
    (a trace file an older version wrote): what it returned stays within the same bounds.

    When nothing needs withholding or capping (an untainted span of numbers, flags, None,
    texts and lists or tuples of texts within the cap: a turn's spans), it is ``attributes``
    itself behind a read-only view, not a copy: each exporter of each span would otherwise copy
    it. The view is live: copy it (``dict(...)``) to keep or change it. Otherwise, a new dict.
    """
    if not tainted:
        for value in attributes.values():
            if type(value) is str:
                if len(value) > ATTRIBUTE_LIMIT:
                    break
            elif type(value) in _AS_IS:
                continue
            elif type(value) is list or type(value) is tuple:
                try:  # texts only (join refuses anything else), within the cap
                    if len("".join(value)) <= ATTRIBUTE_LIMIT:
                        continue
                except TypeError:
                    pass
                break
            else:
                break
        else:
            return MappingProxyType(attributes)
    return _export_copy(name, attributes, tainted)


def _export_copy(name: str, attributes: Mapping[str, object], tainted: bool) -> dict[str, object]:
    """:func:`export_attributes` as a new dict, each value through the rule."""
    text_here = _TEXT_ON.get(name, _NO_TEXT)
    out: dict[str, object] = {}
    for key, value in attributes.items():
        if value is None or isinstance(value, _NUMBERS):
            out[key] = value
        elif tainted and (key not in SAFE_ATTRIBUTES or key in text_here):
            out[key] = (
                _bounded([WITHHELD] * len(value)) if isinstance(value, (list, tuple)) else WITHHELD
            )
        elif type(value) is str and len(value) <= ATTRIBUTE_LIMIT:
            out[key] = value  # the common case, first
        else:
            out[key] = _bounded(value)
    return out


def export_error(error: str | None, error_type: str | None, tainted: bool) -> str | None:
    """A span's ``error`` as an exporter may record it: capped, and withheld when ``tainted``.

    An error's message often quotes its input (the URL refused, the arguments that did not
    parse); its type is kept.
    """
    if error is None:
        return None
    if tainted:
        return f"{error_type or 'error'}: {WITHHELD}"
    return _cut(error, ATTRIBUTE_LIMIT)


def _cut(text: str, room: int) -> str:
    """``text`` in at most ``room`` characters: as it is, or its start and a cut marker."""
    if len(text) <= room:
        return text
    keep = max(room - _MARK_ROOM, 0)
    return f"{text[:keep]}…[cut {len(text) - keep:,} chars]"


def _bounded(value: object) -> object:
    """``value`` capped at :data:`ATTRIBUTE_LIMIT` characters (its JSON's, if not text).

    A list of scalars (ids, names) is capped by the characters of its items, whole items
    kept; any other value by its JSON, which becomes the string kept when too long.
    """
    if isinstance(value, str):
        return _cut(value, ATTRIBUTE_LIMIT)
    if isinstance(value, (list, tuple)):
        total = 0
        for item in value:
            if isinstance(item, str):
                total += len(item)
            elif item is None or isinstance(item, _NUMBERS):
                total += len(str(item))
            else:
                break
        else:
            return value if total <= ATTRIBUTE_LIMIT else _cut_list(value)
    text = json.dumps(jsonable(value), ensure_ascii=False)
    return value if len(text) <= ATTRIBUTE_LIMIT else _cut(text, ATTRIBUTE_LIMIT)


def _cut_list(items: Sequence[object]) -> list[object]:
    """The first of ``items`` (scalars) that fit the limit, and a marker saying how many not."""
    left = ATTRIBUTE_LIMIT - _MARK_ROOM  # room for the items marker
    out: list[object] = []
    for item in items:
        size = len(item) if isinstance(item, str) else len(str(item))
        if size > left:
            if isinstance(item, str) and left > _MARK_ROOM:
                out.append(_cut(item, left))
            break
        out.append(item)
        left -= size
    out.append(f"…[cut {len(items) - len(out):,} items]")
    return out


_USAGE_NAMES: dict[str, tuple[str, ...]] = {
    "input_tokens": ("gen_ai.usage.input_tokens",),
    "output_tokens": ("gen_ai.usage.output_tokens",),
    "cache_read_tokens": ("gen_ai.usage.cache_read.input_tokens",),
    "cache_write_tokens": ("gen_ai.usage.cache_creation.input_tokens",),
    "reasoning_tokens": ("gen_ai.usage.reasoning.output_tokens",),
}
_TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "tool": ("gen_ai.tool.name",),
    "call_id": ("gen_ai.tool.call.id",),
}

#: Per span name, the attributes OpenTelemetry's GenAI semantic conventions name, and their
#: names there (see :meth:`Span.genai_attributes`); every other attribute is ``agentkit.<key>``.
#: ``finish_reason`` becomes the list ``gen_ai.response.finish_reasons``.
GENAI_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "run": {"agent": ("gen_ai.agent.name",), **_USAGE_NAMES},
    "model_call": {
        "model": ("gen_ai.request.model", "gen_ai.response.model"),
        "finish_reason": ("gen_ai.response.finish_reasons",),
        **_USAGE_NAMES,
    },
    # one model of a fallback chain tried (agentkit_core.FallbackModel): its model and tokens
    "model_attempt": {"model": ("gen_ai.request.model",), **_USAGE_NAMES},
    "tool_call": _TOOL_NAMES,
    "verdict": _TOOL_NAMES,
    "guardrail": _TOOL_NAMES,
}

#: Per span name, the GenAI attributes that say what it does, first among its GenAI attributes.
GENAI_OPERATIONS: dict[str, dict[str, object]] = {
    "run": {"gen_ai.operation.name": "invoke_agent"},
    "model_call": {"gen_ai.operation.name": "chat"},
    "model_attempt": {"gen_ai.operation.name": "chat"},
    "tool_call": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function"},
}

#: Attributes that quote what a person wrote: in :meth:`Span.genai_attributes` on request only.
CONTENT_ATTRIBUTES = frozenset({"question"})

#: Marks an attribute recorded as a list of one (``finish_reason``), before its GenAI name.
_LIST = "\0list"
_SCALARS = frozenset({str, bool, int, float})
_TEXTS = frozenset({str})
#: The most span names, and attribute keys per span name, whose GenAI names are remembered:
#: names made up at run time (a key per item, say) are worked out each time, not kept unbounded.
_KEPT = 512
#: Per span name, each attribute key seen: its GenAI name(s) (see :func:`_genai_name`).
_GENAI_SEEN: dict[str, dict[str, str | tuple[str, ...]]] = {}


def _genai_name(name: str, key: str) -> str | tuple[str, ...]:
    """``agentkit.<key>``, else its GenAI name(s), else (_LIST, its name), else () (content)."""
    if key in CONTENT_ATTRIBUTES:
        return ()
    targets = GENAI_NAMES.get(name, {}).get(key)
    if targets is None:
        return "agentkit." + key
    return (_LIST, targets[0]) if key == "finish_reason" else targets


def _otel_value(value: object) -> object:
    """``value`` as OpenTelemetry takes it: a scalar, a list of texts or of ints, else JSON."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, list | tuple) and (
        {*map(type, value)} <= _TEXTS  # ids and names, the common lists: one call, no loop
        or all(isinstance(v, str) for v in value)
        or all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return value  # as it is: OpenTelemetry keeps a copy of its own
    return json.dumps(jsonable(value), ensure_ascii=False)


def _genai_mapping(name: str, exported: Mapping[str, object], content: bool) -> dict[str, object]:
    """:meth:`Span.genai_attributes` worked out from ``exported``, key by key."""
    # the span's own attributes, read-only, only when each is None, a number, a flag, a text
    # or a list or tuple of texts (see export_attributes): what OpenTelemetry takes as is
    plain = type(exported) is MappingProxyType
    names = _GENAI_SEEN.get(name)
    if names is None:
        names = {}
        if len(_GENAI_SEEN) < _KEPT:
            _GENAI_SEEN[name] = names
    operation = GENAI_OPERATIONS.get(name)
    out: dict[str, object] = {**operation} if operation else {}
    for key, value in exported.items():
        target = names.get(key)
        if target is None:
            target = _genai_name(name, key)
            if len(names) < _KEPT:
                names[key] = target
        if type(target) is str:  # agentkit.<key>: the common case, first
            if value is not None:
                out[target] = value if plain or type(value) in _SCALARS else _otel_value(value)
        elif value is None:
            continue
        elif not target:  # content
            if content:
                out["agentkit." + key] = _otel_value(value)
        elif target[0] == _LIST:  # finish_reason: a list of one
            out[target[1]] = [str(value)]
        else:  # its GenAI name(s)
            value = value if type(value) in _SCALARS else str(value)
            for genai_name in target:
                out[genai_name] = value
    return out


#: What core sets on a run's span (the agent starts it, ``stamp_run`` ends it): for each, its
#: GenAI name (see :data:`GENAI_NAMES`) -- what :func:`run_genai` maps without a lookup per key.
_RUN_GENAI = {
    key: target if type(target) is str else target[0]
    for key in (
        "agent",
        "model",
        "session_id",
        "task_item",
        "status",
        "stop_reason",
        "requests",
        "cost",
        "pending",
        *_USAGE_NAMES,
    )
    for target in (_genai_name("run", key),)
}
#: Those the conventions name (``agent``, the token counts).
_RUN_NAMED = frozenset(GENAI_NAMES["run"])


def run_genai(attributes: Mapping[str, object]) -> dict[str, object] | None:
    """A run's :meth:`Span.genai_attributes` from what core set on its span, as it ends.

    None when the export rule would change a value (a text past the cap, a value of another
    type) or the attributes hold one core does not set (a plugin's): the span then maps its
    exported attributes when asked. Made once a run, where it is stamped.
    """
    out: dict[str, object] = {"gen_ai.operation.name": "invoke_agent"}
    try:
        for key, value in attributes.items():
            if value is None:
                continue
            kind = type(value)
            if kind is str:
                if len(value) > ATTRIBUTE_LIMIT:  # type: ignore[arg-type]  # a str
                    return None
            elif kind not in _AS_IS and (  # else a list of texts within the cap (ids)
                (kind is not list and kind is not tuple)
                or key in _RUN_NAMED  # a GenAI name takes a list as its text
                or len("".join(value)) > ATTRIBUTE_LIMIT  # type: ignore[arg-type]
            ):
                return None
            out[_RUN_GENAI[key]] = value
    except (KeyError, TypeError):  # a key core does not set; a list not of texts
        return None
    return out


@dataclass(slots=True)
class Span:
    """A named, timed unit of work with attributes (``compaction_rejected``, token counts...).

    ``parent`` is the enclosing span's name and ``parent_id`` its id (which may belong to
    another run's trace: a child agent's run nests under the tool call that started it).
    ``error_plugin`` names the plugin an error came from, when the error says so.
    """

    # Trace._open passes the fields up to ``tainted`` by position: keep their order.
    name: str
    attributes: dict[str, Any] = field(default_factory=dict)
    start: float = field(default_factory=perf_counter)
    end: float | None = None
    parent: str | None = None
    error: str | None = None
    span_id: str = field(default_factory=_new_id)
    parent_id: str | None = None
    run_id: str | None = None
    start_ns: int = field(default_factory=time_ns)
    end_ns: int | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    tainted: bool = False
    error_type: str | None = None
    error_plugin: str | None = None
    #: The step span (see :meth:`Trace.step`) open under this span, with its context token.
    open_step: tuple[Span, contextvars.Token[Span | None]] | None = field(
        default=None, repr=False, compare=False
    )
    #: :meth:`genai_attributes` of an untainted span, made by core where it set the attributes
    #: (a model or tool call's, once it answered; a run's, once stamped with what it came to),
    #: with the export rule checked there; None for any other span, which maps its exported
    #: attributes when asked. At its end (in :meth:`SpanExporter.on_end`) it is None for a span
    #: that failed or is tainted.
    genai: dict[str, object] | None = field(default=None, repr=False, compare=False)

    def set(self, key: str, value: object) -> None:
        self.attributes[key] = value

    def exported_attributes(self) -> Mapping[str, Any]:
        """The attributes as exporters record them: capped, text withheld once tainted.

        An exporter reads these, never :attr:`attributes` (see :func:`export_attributes`):
        read-only, often a live view of :attr:`attributes` itself; copy it to keep or change it.
        """
        return export_attributes(self.name, self.attributes, self.tainted)

    def genai_attributes(self, *, content: bool = False) -> Mapping[str, object]:
        """:meth:`exported_attributes` under OpenTelemetry's GenAI semantic-convention names.

        An attribute the conventions name becomes it (``model`` of a model call is
        ``gen_ai.request.model`` and ``gen_ai.response.model``, its ``finish_reason`` the list
        ``gen_ai.response.finish_reasons``, token counts ``gen_ai.usage.*``, a tool call's
        ``tool`` and ``call_id`` ``gen_ai.tool.name`` and ``gen_ai.tool.call.id``: see
        :data:`GENAI_NAMES`); any other ``agentkit.<key>``. Runs, model and tool calls start
        with their operation (:data:`GENAI_OPERATIONS`). None values are left out, and a
        value OpenTelemetry does not take (a dict, a list of mixed types) is its JSON text.
        Attributes that quote what a person wrote (``question``) only with ``content``.
        Read-only: copy it to keep or change it.
        """
        genai = self.genai
        if genai is not None and not self.tainted:
            return genai  # core's own, made once where it set the attributes
        exported = export_attributes(self.name, self.attributes, self.tainted)
        return _genai_mapping(self.name, exported, content)

    def exported_error(self) -> str | None:
        """:attr:`error` as exporters record it: capped, its message withheld once tainted."""
        return export_error(self.error, self.error_type, self.tainted)

    @property
    def duration(self) -> float | None:
        return None if self.end is None else self.end - self.start

    def to_dict(
        self, *, content: bool = False, payload: Mapping[str, object] | None = None
    ) -> JSONObject:
        """The span as JSON-ready data, for exporters.

        Attributes and error are the exported ones (:meth:`exported_attributes`); ``tainted``
        says whether the run was secret-tainted when the span ended. With ``content`` the
        payload (``payload`` if given, else the span's) is included, JSON-encoded, unless the
        span is tainted (then ``payload`` is None).
        """
        data: JSONObject = {
            "name": self.name,
            "span_id": self.span_id,
            "parent_id": self.parent_id,
            "run_id": self.run_id,
            "attributes": jsonable(dict(self.exported_attributes())),
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "duration_s": self.duration,
            "parent": self.parent,
            "error": self.exported_error(),
            "tainted": self.tainted,
        }
        if self.error is not None:
            data["error_type"] = self.error_type
            data["error_plugin"] = self.error_plugin
        if content:
            chosen = self.payload if payload is None else payload
            data["payload"] = None if self.tainted else jsonable(chosen)
        return data


class SpanExporter:
    """Receives a run's spans as they start and end.

    Subclass and override either method; both default to doing nothing. They are called in
    the run's own task, so they must be quick (queue the work; the OpenTelemetry SDK's batch
    processor does). One that raises is detached from that run and logged on the
    ``agentkit.tracing`` logger: an exporter never breaks a run.
    """

    #: True for an exporter that reads :meth:`Span.genai_attributes`: core then makes them
    #: once, where it sets a model or tool call's (or a run's last) attributes, and hands that
    #: over as it is.
    genai: bool = False

    def on_start(self, span: Span) -> bool | None:
        """``span`` has opened: name, attributes given at the start, payload, parent.

        Returning False for a ``run`` span (a sampler's "not this run") detaches the exporter
        from that run: it hears of none of its spans again, not even that one's end, so an
        untraced run costs it nothing per span. Any other return value is ignored.
        """
        return None

    def on_end(self, span: Span) -> None:
        """``span`` has ended: its attributes, error and ``end_ns`` are final.

        Record :meth:`Span.exported_attributes` and :meth:`Span.exported_error`, not the raw
        ones: they are capped, and withhold what a person or the model wrote once the run is
        secret-tainted. The exported attributes are read-only (often a view of the span's
        own): copy them to keep or change them. An exporter that speaks OpenTelemetry's GenAI
        conventions reads :meth:`Span.genai_attributes` (and sets :attr:`genai`).
        """


def check_exporters(exporters: Sequence[SpanExporter]) -> list[SpanExporter]:
    """``exporters`` as a list, each checked to be a :class:`SpanExporter`."""
    from ._errors import ConfigError

    if isinstance(exporters, SpanExporter):
        exporters = [exporters]
    checked = list(exporters)
    for exporter in checked:
        if not isinstance(exporter, SpanExporter):
            raise ConfigError(
                f"exporters= takes agentkit_core.plugin.SpanExporter instances, got "
                f"{type(exporter).__name__} {exporter!r}; subclass SpanExporter and override "
                "on_start/on_end",
                value=exporter,
                source="exporters=",
            )
    return checked


@dataclass(slots=True)
class Trace:
    """The spans of one run, in the order they were opened, and the exporters told of them.

    ``tainted`` is asked at each span's start and end: once it answers True (the run's
    context passes its secret taint), spans are marked and exporters record no payload.

    With ``keep`` False, :attr:`spans` stays empty: exporters and the event stream still hear
    of every span, but the trace holds none (a run's memory would otherwise grow by its spans,
    three a turn). An agent makes such a trace for a run whose context it made itself, which
    nobody can read after the run; a context you pass in keeps every span.
    """

    spans: list[Span] = field(default_factory=list)
    run_id: str | None = None
    tainted: Callable[[], bool] = field(default=_untainted, repr=False)
    exporters: list[SpanExporter] = field(default_factory=list)
    #: One line per exporter that raised and was detached.
    errors: list[str] = field(default_factory=list)
    #: The run's event log while someone streams its events (``Agent.run_stream_events``).
    events: EventLog | None = None
    _step_of: dict[str, Span] = field(default_factory=dict, repr=False)
    keep: bool = True
    #: Whether an exporter reads :meth:`Span.genai_attributes` (:attr:`SpanExporter.genai`):
    #: core then makes them where it sets a model or tool call's (or a run's last) attributes.
    genai: bool = False

    def __post_init__(self) -> None:
        self._exporters_changed()

    def _exporters_changed(self) -> None:
        self.genai = any(getattr(e, "genai", False) is True for e in self.exporters)

    def attach(self, exporters: Sequence[SpanExporter]) -> None:
        """Tell ``exporters`` (those not attached already) of every span from now on."""
        for exporter in exporters:
            if not any(e is exporter for e in self.exporters):
                self.exporters.append(exporter)
        self._exporters_changed()

    def open(
        self, name: str, payload: dict[str, object] | None = None, **attributes: object
    ) -> Span:
        """A new span under the current one, told to the exporters; close it with :meth:`close`."""
        return self._open(name, payload, attributes)

    def _open(
        self,
        name: str,
        payload: dict[str, object] | None,
        attributes: dict[str, object],
        since: float | None = None,
    ) -> Span:
        """:meth:`open` with the attributes dict the span keeps (the caller's own, not copied).

        ``since`` (a ``perf_counter`` reading) backdates the start: see :meth:`record`.
        """
        parent = _current.get()
        start, start_ns = perf_counter(), time_ns()
        if since is not None:
            start_ns -= int((start - since) * 1e9)
            start = since
        # every field in order, none left to a default factory: a turn opens several spans
        span = Span(
            name,
            attributes,
            start,
            None,
            parent.name if parent else None,
            None,
            _new_id(),
            parent.span_id if parent else None,
            self.run_id,
            start_ns,
            None,
            payload if payload is not None else {},
            self.tainted(),
        )
        if self.keep:
            self.spans.append(span)
        if self.exporters:
            self._tell("on_start", span)
        if self.events is not None:
            self.events.span_opened(span)
        return span

    def close(self, span: Span, exc: BaseException | None = None) -> None:
        """End ``span`` (after any step still open under it), recording ``exc`` if given."""
        if span.open_step is not None:
            self._end_step(span, exc)
        if exc is not None:
            span.error = f"{type(exc).__name__}: {exc}"
            span.error_type = type(exc).__name__
            plugin = getattr(exc, "plugin", None)
            span.error_plugin = plugin if isinstance(plugin, str) and plugin else None
            span.genai = None  # an exporter adds the error's type to what it maps
        span.end = perf_counter()
        span.end_ns = time_ns()
        if span.tainted or self.tainted():
            span.tainted = True
            span.genai = None  # made of raw values, some of which are withheld now
        if self.exporters:
            self._tell("on_end", span)
        if self.events is not None:
            self.events.span_closed(span)

    def record(
        self,
        name: str,
        attributes: dict[str, object],
        since: float,
        exc: BaseException | None = None,
    ) -> Span:
        """A span for work that has just ended: from ``since`` (a ``perf_counter`` reading) to now.

        For work worth a span only once its outcome is known (a tool call's verdict, when
        someone had one): it sits under the current span, and exporters hear of its start and
        end together. Spans opened during the work are not under it.
        """
        span = self._open(name, None, attributes, since)
        self.close(span, exc)
        return span

    def _enter(
        self, name: str, payload: dict[str, object] | None, attributes: dict[str, object]
    ) -> tuple[Span, contextvars.Token[Span | None]]:
        """What ``with span(...)`` does on entry, for core's hot paths: open, make current.

        ``attributes`` is kept as the span's own dict. End it with :meth:`_exit`.
        """
        span = self._open(name, payload, attributes)
        return span, _current.set(span)

    def _exit(
        self, span: Span, token: contextvars.Token[Span | None], exc: BaseException | None
    ) -> None:
        """What ``with span(...)`` does on exit: close with ``exc``, then restore the current."""
        try:
            self.close(span, exc)
        finally:
            _current.reset(token)

    def span(
        self, name: str, payload: dict[str, object] | None = None, **attributes: object
    ) -> _SpanScope:
        """Open a span for the duration of the block; it becomes :func:`current_span`.

        ``with trace.span(...) as span:`` -- an exception leaving the block is recorded on the
        span and goes on.
        """
        return _SpanScope(self, name, payload, attributes)

    def step(self, name: str, **attributes: object) -> Span:
        """Open a span that lasts until the next ``step`` under the same span, or its end.

        The agent loop marks each turn this way, so a turn needs no block of its own. The step
        becomes :func:`current_span`. Outside any span it is a detached span, told to no one.
        """
        current = _current.get()
        if current is None:
            return Span(name, attributes)
        enclosing = self._step_of.get(current.span_id, current)
        if enclosing.open_step is not None:
            self._end_step(enclosing)
        span = self._open(name, None, attributes)
        enclosing.open_step = (span, _current.set(span))
        self._step_of[span.span_id] = enclosing
        return span

    def _end_step(self, enclosing: Span, exc: BaseException | None = None) -> None:
        if enclosing.open_step is not None:
            step, token = enclosing.open_step
            enclosing.open_step = None
            del self._step_of[step.span_id]
            _current.reset(token)
            self.close(step, exc)

    def _tell(self, method: str, span: Span) -> None:
        for exporter in list(self.exporters):
            try:
                if getattr(exporter, method)(span) is False and span.name == "run":
                    self.exporters.remove(exporter)  # sampled out (SpanExporter.on_start)
                    self._exporters_changed()
            except Exception as exc:
                self.exporters.remove(exporter)
                self._exporters_changed()
                line = (
                    f"span exporter {exporter!r} raised {type(exc).__name__}: {exc} in "
                    f"{method}({span.name!r}); detached from run {self.run_id!r}"
                )
                self.errors.append(line)
                _log.warning("%s", line)

    def find(self, name: str) -> list[Span]:
        """Every span of that name, oldest first."""
        return [s for s in self.spans if s.name == name]

    def export(self) -> list[JSONObject]:
        return [s.to_dict() for s in self.spans]


class _SpanScope:
    """The context manager :meth:`Trace.span` returns (a class: a turn opens several)."""

    __slots__ = ("_attributes", "_name", "_payload", "_span", "_token", "_trace")

    def __init__(
        self,
        trace: Trace,
        name: str,
        payload: dict[str, object] | None,
        attributes: dict[str, object],
    ) -> None:
        self._trace = trace
        self._name = name
        self._payload = payload
        self._attributes = attributes

    def __enter__(self) -> Span:
        span, self._token = self._trace._enter(self._name, self._payload, self._attributes)
        self._span = span
        return span

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        self._trace._exit(self._span, self._token, exc)


def current_span() -> Span:
    """The innermost open span; outside any, a detached span whose attributes go nowhere."""
    return _current.get() or Span("detached")


def current_call_id() -> str:
    """The id of the tool call whose span is current (a tool running in this task), else ""."""
    span = _current.get()
    return str(span.attributes.get("call_id", "")) if span and span.name == "tool_call" else ""
