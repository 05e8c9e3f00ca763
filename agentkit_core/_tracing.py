"""Trace spans: runs, turns, model and tool calls, verdicts and folds, handed to span exporters.

Core keeps its own small span type so a run is traced with no tracing library installed; a
:class:`SpanExporter` (the ``tracing-otel`` plugin, ``agentkit run --trace``'s file, the CLI's
step lines) is told when each span starts and ends. A span's ``attributes`` are small facts
(names, counts, ids); its ``payload`` holds references to what was sent and received (messages,
arguments, results), which an exporter serializes only when it records content at all, and
never once the run is secret-tainted.

Some attributes quote what a person or the model wrote (a blocked URL, the tool names a model
asked for, a hook's reason): :meth:`Span.exported_attributes` gives them through the export
rule (:mod:`._span_export`), and :meth:`Span.genai_attributes` the same under OpenTelemetry's
GenAI names (:mod:`._genai`).
"""

from __future__ import annotations

import contextvars
import logging
import os
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from time import perf_counter
from time import time_ns
from typing import TYPE_CHECKING
from typing import Any

from ._event_log import EventLog
from ._genai import _genai_mapping
from ._span_export import export_attributes
from ._span_export import export_error
from ._span_export import recordable

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
            "attributes": recordable(dict(self.exported_attributes())),
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
            data["payload"] = None if self.tainted else recordable(chosen)
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
    if not isinstance(exporters, Sequence) or isinstance(exporters, str | bytes):
        raise ConfigError(
            f"exporters= takes a list of agentkit_core.plugin.SpanExporter instances, got "
            f"{type(exporters).__name__} {exporters!r:.200}",
            value=exporters,
            source="exporters=",
        )
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
                    f"span exporter {_said(repr, exporter)} raised {type(exc).__name__}: "
                    f"{_said(str, exc)} in {method}({span.name!r}); detached from run "
                    f"{self.run_id!r}"
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


def _said(how: Callable[[object], str], value: object) -> str:
    """``how(value)``, or its type's name when that raises.

    A broken exporter's ``__repr__`` (or its exception's ``__str__``) raised out of the
    handler that detaches it, and the run it was to be detached from failed.
    """
    try:
        return how(value)
    except Exception:
        return f"<{type(value).__name__}>"


def current_span() -> Span:
    """The innermost open span; outside any, a detached span whose attributes go nowhere."""
    return _current.get() or Span("detached")


def current_call_id() -> str:
    """The id of the tool call whose span is current (a tool running in this task), else ""."""
    span = _current.get()
    return str(span.attributes.get("call_id", "")) if span and span.name == "tool_call" else ""
