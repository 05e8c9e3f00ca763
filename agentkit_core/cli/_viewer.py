"""The run viewer: what a run did, from its trace spans or its checkpoint, as one HTML page.

Two steps, so each source needs only the first: a *run view* (plain data: the run's status,
its turns, each turn's model calls, tool calls, verdicts and folds, pending calls, errors and
omissions) is built from a trace file's spans or from a run's latest checkpoint; then
:func:`render_html` writes it as one self-contained page (inline CSS and script, nothing
fetched), linear in the size of the run.
"""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Literal
from typing import TypedDict

from .._messages import JSONObject
from .._messages import JSONValue
from .._messages import Message
from .._messages import ToolCall
from .._span_export import export_attributes
from .._span_export import export_error
from ._trace_file import collector_paused
from ._viewer_assets import CSS as _CSS
from ._viewer_assets import SCRIPT as _SCRIPT
from ._viewer_assets import SCRIPT_SRC
from ._viewer_content import IMG_SRC
from ._viewer_content import MediaRow
from ._viewer_content import content_text
from ._viewer_content import esc as _esc
from ._viewer_content import json_text
from ._viewer_content import media_of
from ._viewer_content import message_line
from ._viewer_content import render_media

if TYPE_CHECKING:
    from .._checkpoint import Checkpoint

#: Payloads longer than this (in characters) start collapsed.
COLLAPSE_AT = 400

_OMISSION_KEYS = ("compaction_rejected", "compaction_repaired", "omitted")

# What a run view holds. Values copied from a trace's spans stay JSON values: a file another
# writer made may hold anything there, and the page shows whatever it finds.

_ExtraKey = Literal["cache_read_tokens", "cache_write_tokens", "reasoning_tokens"]


class ExtraTokens(TypedDict, total=False):
    """The token counts a provider reports beside input and output, when it reports them."""

    cache_read_tokens: JSONValue
    cache_write_tokens: JSONValue
    reasoning_tokens: JSONValue


class UsageView(ExtraTokens):
    """A run's token counts, model calls and cost (None: unknown), from its ``run`` span."""

    input_tokens: JSONValue
    output_tokens: JSONValue
    requests: JSONValue
    cost: JSONValue


class ModelCallRow(ExtraTokens):
    """One model call: its model, latency, tokens, cost and answer."""

    model: JSONValue
    latency_s: JSONValue
    input_tokens: JSONValue
    output_tokens: JSONValue
    cost: JSONValue
    finish: JSONValue
    messages: JSONValue
    text: str
    #: the span it was made for (``fold``, ...) when not the turn itself
    under: JSONValue
    error: JSONValue


class CallRow(TypedDict):
    """A tool call as the model asked for it (a pending call, or a tool row's start)."""

    id: JSONValue
    name: JSONValue
    arguments: JSONValue


class ToolRow(CallRow):
    """One tool call: its arguments, result, timing and the verdicts on it."""

    result: str | None
    is_error: JSONValue
    duration_s: JSONValue
    verdict: str | None
    guardrail: str | None
    error: JSONValue


class FoldRow(TypedDict):
    """A fold: its sizes, the summary and what it replaced."""

    messages: JSONValue
    tokens_before: JSONValue
    tokens_after: JSONValue
    error: JSONValue
    summary: str
    folded: list[str]


class ErrorRow(TypedDict):
    """An error a span recorded, and the plugin it came from."""

    span: JSONValue
    error: JSONValue
    plugin: JSONValue
    type: JSONValue


class TurnView(TypedDict):
    """One turn (``n`` 0 for what came before the first): its calls and folds."""

    n: int
    duration_s: JSONValue
    model_calls: list[ModelCallRow]
    tools: list[ToolRow]
    folds: list[FoldRow]


class RunView(TypedDict):
    """What one run did, as the page shows it."""

    run_id: JSONValue
    agent: JSONValue
    source: str
    task: JSONValue
    #: The images, documents and audio of the user messages and tool results.
    media: list[MediaRow]
    status: JSONValue
    stop_reason: JSONValue
    usage: UsageView | None
    duration_s: JSONValue
    output: JSONValue
    pending: list[CallRow]
    errors: list[ErrorRow]
    omissions: list[str]
    turns: list[TurnView]


def _attributes(span: JSONObject) -> JSONObject:
    attributes = span.get("attributes")
    return attributes if isinstance(attributes, dict) else {}


def _items(value: JSONValue) -> list[JSONValue]:
    """A list a span holds, or none when it holds something else."""
    return value if isinstance(value, list) else []


def _turn_number(value: JSONValue) -> int:
    """A ``turn`` span's number; 0 (as for a turn that has none) when it is not a count.

    A file's value may be any JSON: text, a float, NaN, infinity or a list made ``int()``
    raise out of the viewer.
    """
    if isinstance(value, str) and value.isascii() and value.isdecimal() and len(value) < 10:
        return int(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e9:
        return int(value)
    return 0


def _is_turn(span: JSONObject) -> bool:
    return span.get("name") == "turn"


def _parent_id(span: JSONObject) -> str:
    parent = span.get("parent_id")
    return parent if isinstance(parent, str) else ""


def _new_turn(number: int, duration: JSONValue) -> TurnView:
    return {"n": number, "duration_s": duration, "model_calls": [], "tools": [], "folds": []}


def _tool_row(call_id: JSONValue, name: JSONValue, arguments: JSONValue = None) -> ToolRow:
    return {
        "id": call_id,
        "name": name,
        "arguments": arguments,
        "result": None,
        "is_error": None,
        "duration_s": None,
        "verdict": None,
        "guardrail": None,
        "error": None,
    }


def _payload(span: JSONObject) -> JSONObject | None:
    payload = span.get("payload")
    return payload if isinstance(payload, dict) else None


def _withheld(span: JSONObject) -> str:
    if span.get("tainted"):
        return "(withheld: the run is secret-tainted)"
    return "(not recorded)"


def _error(span: JSONObject) -> ErrorRow:
    return {
        "span": span.get("name"),
        "error": span.get("error"),
        "plugin": span.get("error_plugin"),
        "type": span.get("error_type"),
    }


def _as_exported(span: JSONObject) -> JSONObject:
    """``span`` (a trace file's) with its attributes and error as exporters record them.

    This version's files already hold only those; a file an older version or another writer
    made may hold a tainted span's text, or a value of any size, which the page must not show.
    """
    error = span.get("error")
    error_type = span.get("error_type")
    tainted = bool(span.get("tainted"))
    return {
        **span,
        "attributes": dict(export_attributes(str(span.get("name")), _attributes(span), tainted)),
        "error": export_error(
            None if error is None else str(error),
            error_type if isinstance(error_type, str) else None,
            tainted,
        ),
    }


@collector_paused()
def views_from_spans(spans: Sequence[JSONObject]) -> list[RunView]:
    """One run view per ``run`` span of ``spans`` (a trace file's), in start order.

    Attributes and errors are shown as exporters record them (:func:`export_attributes`),
    whoever wrote the file.
    """
    views = _Views([_as_exported(span) for span in spans])
    for span in views.spans:
        views.add(span)
    return views.finish()


@dataclass
class _Run:
    """A run view being built, with what :meth:`_Views.finish` adds to it last."""

    view: RunView
    #: calls made before the first turn
    prelude: TurnView
    #: the error the ``run`` span itself recorded
    error: ErrorRow | None


class _Views:
    """The run views being built from one trace's spans: runs, their turns and tool rows."""

    def __init__(self, spans: list[JSONObject]) -> None:
        self.spans = spans
        self.by_id = {key: s for s in spans if isinstance(key := s.get("span_id"), str)}
        self.runs = {
            run["span_id"]: _Run(
                _run_view(run), _new_turn(0, None), _error(run) if run.get("error") else None
            )
            for run in spans
            if run.get("name") == "run"
        }
        self.turns: dict[JSONValue, TurnView] = {}
        # span id -> the run span, the turn span, at or above it (see _climb)
        self._runs_at: dict[str, JSONObject | None] = {}
        self._turns_at: dict[str, JSONObject | None] = {}
        self.tool_rows: dict[tuple[str, str], ToolRow] = {}

    def run_of(self, span: JSONObject) -> _Run | None:
        """The run ``span`` is in (itself, for a run's), or None: its parents end, or cycle."""
        found = self._climb(span, self._runs_at, lambda node: node.get("name") == "run")
        return None if found is None else self.runs.get(str(found.get("span_id")))

    def _climb(
        self,
        span: JSONObject,
        cache: dict[str, JSONObject | None],
        wanted: Callable[[JSONObject], bool],
    ) -> JSONObject | None:
        """The first span from ``span`` up its parents that is ``wanted``, or None.

        None at a run, a missing parent or a cycle; what each span on the way leads to is kept
        in ``cache``. Walking the whole way for every span made a file of 8,000 spans, each
        under the one before, take a minute (50,000: hours): now each is walked once.
        """
        path: dict[str, None] = {}  # in order, and quick to ask
        found: JSONObject | None = None
        node: JSONObject | None = span
        while node is not None:
            key = node.get("span_id")
            if isinstance(key, str) and key in cache:
                found = cache[key]
                break
            if wanted(node):
                found = node
                break
            if node.get("name") == "run" or (isinstance(key, str) and key in path):  # a cycle
                break
            if isinstance(key, str):
                path[key] = None
            node = self.by_id.get(_parent_id(node))
        for key in path:
            cache[key] = found
        return found

    def turn_for(self, span: JSONObject, run: _Run) -> TurnView:
        parent = self.by_id.get(_parent_id(span))
        turn = None if parent is None else self._climb(parent, self._turns_at, _is_turn)
        if turn is None:
            return run.prelude
        return self.add_turn(turn, run.view)

    def add_turn(self, span: JSONObject, view: RunView) -> TurnView:
        made = self.turns.get(span["span_id"])
        if made is None:
            made = _new_turn(_turn_number(_attributes(span).get("turn")), span.get("duration_s"))
            self.turns[span["span_id"]] = made
            view["turns"].append(made)
        return made

    def tool_row(
        self, view: RunView, turn: TurnView, call_id: JSONValue, name: JSONValue
    ) -> ToolRow:
        key = (str(view["run_id"]), str(call_id))  # a file's id may be any JSON value
        row = self.tool_rows.get(key)
        if row is None:
            row = _tool_row(call_id, name)
            self.tool_rows[key] = row
            turn["tools"].append(row)
        return row

    def add(self, span: JSONObject) -> None:
        """Put one span (not a run's) into its run's view."""
        name = span.get("name")
        run = self.run_of(span)
        if run is None or name == "run":
            return
        view = run.view
        attrs = _attributes(span)
        for key in _OMISSION_KEYS:
            if attrs.get(key):
                view["omissions"].append(f"{key.replace('_', ' ')}: {attrs[key]}")
        if name == "turn":
            self.add_turn(span, view)
            return
        turn = self.turn_for(span, run)
        if span.get("error"):
            view["errors"].append(_error(span))
        if name == "model_call":
            self.model_call(span, view, turn)
        elif name == "tool_call":
            self.tool_call(span, view, turn)
        elif name in ("verdict", "guardrail"):
            self.verdict(span, view, turn)
        elif name == "fold":
            turn["folds"].append(_fold_row(span))

    def model_call(self, span: JSONObject, view: RunView, turn: TurnView) -> None:
        attrs = _attributes(span)
        payload = _payload(span)
        response = (payload or {}).get("response")
        if not isinstance(response, dict):
            response = {}
        turn["model_calls"].append(
            {
                "model": attrs.get("model"),
                "latency_s": span.get("duration_s"),
                "input_tokens": attrs.get("input_tokens"),
                "output_tokens": attrs.get("output_tokens"),
                **_cache_and_reasoning(attrs),
                "cost": attrs.get("cost"),
                "finish": attrs.get("finish_reason"),
                "messages": attrs.get("messages"),
                "text": content_text(response.get("content")) if payload else _withheld(span),
                "under": span.get("parent") if span.get("parent") != "turn" else None,
                "error": span.get("error"),
            }
        )
        calls = _items(response.get("tool_calls"))
        names = _items(attrs.get("tool_call_names"))
        for i, call_id in enumerate(_items(attrs.get("tool_call_ids"))):
            row = self.tool_row(view, turn, call_id, names[i] if i < len(names) else "")
            call = calls[i] if i < len(calls) else None
            if isinstance(call, dict):
                row["arguments"] = _arguments(call.get("arguments"))

    def tool_call(self, span: JSONObject, view: RunView, turn: TurnView) -> None:
        attrs = _attributes(span)
        payload = _payload(span)
        row = self.tool_row(view, turn, str(attrs.get("call_id")), str(attrs.get("tool")))
        row["duration_s"] = span.get("duration_s")
        row["is_error"] = attrs.get("is_error")
        row["error"] = span.get("error")
        if payload is not None:
            row["arguments"] = payload.get("arguments")
            row["result"] = content_text(payload.get("result"))
        else:
            row["result"] = _withheld(span)

    def verdict(self, span: JSONObject, view: RunView, turn: TurnView) -> None:
        """A ``verdict`` or ``guardrail`` span, on the row of the call it decided."""
        attrs = _attributes(span)
        if span.get("name") == "verdict":
            call_id = attrs.get("call_id")
        else:
            parent = self.by_id.get(_parent_id(span)) or {}
            call_id = _attributes(parent).get("call_id")
        row = self.tool_row(view, turn, str(call_id), str(attrs.get("tool")))
        who = attrs.get("source") or attrs.get("guardrail") or ""
        reason = attrs.get("reason") or ""
        if span.get("name") == "verdict":
            row["verdict"] = verdict_text(attrs)
        else:
            row["guardrail"] = verdict_text(attrs)
        if (attrs.get("decision") or "?") == "deny" and row["result"] is None:
            row["result"] = f"not run: denied by {who or 'a hook'}: {reason or 'no reason'}"
            row["is_error"] = True

    def finish(self) -> list[RunView]:
        """Each run's view complete: pending calls marked, turns in order, errors once."""
        result = []
        for run in self.runs.values():
            view = run.view
            if run.error is not None:
                view["errors"].append(run.error)
            view["turns"].sort(key=lambda t: t["n"])
            # an error that reached the run is also on the span that raised it: keep the first
            unique: dict[JSONValue, ErrorRow] = {}
            for error in view["errors"]:
                unique.setdefault(error["error"], error)
            view["errors"] = list(unique.values())
            prelude = run.prelude
            if prelude["model_calls"] or prelude["tools"] or prelude["folds"]:
                view["turns"].insert(0, prelude)
            _mark_pending(view)  # the calls before the first turn too
            result.append(view)
        return result


def _run_view(run: JSONObject) -> RunView:
    """A run's view as its ``run`` span starts it: what it was asked, its status and usage."""
    attrs = _attributes(run)
    given = _payload(run) or {}
    return {
        "run_id": run.get("run_id"),
        "agent": attrs.get("agent"),
        "source": "trace",
        "task": given.get("task"),
        "media": [],
        "status": attrs.get("status") or ("failed" if run.get("error") else "running"),
        "stop_reason": attrs.get("stop_reason"),
        "usage": {
            "input_tokens": attrs.get("input_tokens"),
            "output_tokens": attrs.get("output_tokens"),
            "requests": attrs.get("requests"),
            **_cache_and_reasoning(attrs),
            "cost": attrs.get("cost"),
        },
        "duration_s": run.get("duration_s"),
        "output": given.get("output"),
        "pending": [
            _call_dict(c) for c in _items(given.get("pending")) if isinstance(c, dict) and "id" in c
        ]
        or [{"id": i, "name": "", "arguments": None} for i in _items(attrs.get("pending"))],
        "errors": [],
        "omissions": [],
        "turns": [],
    }


def _fold_row(span: JSONObject) -> FoldRow:
    """A fold span as the page shows it: sizes, the summary and what it replaced."""
    attrs = _attributes(span)
    payload = _payload(span) or {}
    summary = payload.get("summary")
    return {
        "messages": attrs.get("fold_messages"),
        "tokens_before": attrs.get("fold_tokens_before"),
        "tokens_after": attrs.get("fold_tokens_after"),
        "error": attrs.get("fold_error"),
        "summary": content_text(summary.get("content") if isinstance(summary, dict) else None),
        "folded": [message_line(m) for m in _items(payload.get("folded"))],
    }


def verdict_text(attributes: Mapping[str, object]) -> str:
    """A verdict or guardrail span's decision, who made it and why: ``deny by policy: ...``."""
    who = attributes.get("source") or attributes.get("guardrail") or ""
    reason = attributes.get("reason") or ""
    decision = str(attributes.get("decision") or "?")
    return decision + (f" by {who}" if who else "") + (f": {reason}" if reason else "")


def view_from_checkpoint(checkpoint: Checkpoint, versions: int) -> RunView:
    """A run view from a run's latest :class:`Checkpoint` (no timings: a checkpoint has none)."""
    state: object = checkpoint.state
    unreadable = [] if isinstance(state, dict) else [f"its state ({_short(state)})"]
    if not isinstance(state, dict):
        state = {}
    transcript, pending = state.get("transcript") or [], state.get("pending") or []
    if not isinstance(transcript, list | tuple):
        unreadable.append(f"its transcript ({_short(transcript)})")
        transcript = []
    if not isinstance(pending, list | tuple):
        unreadable.append(f"its pending calls ({_short(pending)})")
        pending = []
    calls = [c for c in pending if isinstance(c, ToolCall | dict)]
    unreadable += [
        f"a pending call ({_short(c)})" for c in pending if not isinstance(c, ToolCall | dict)
    ]
    status = checkpoint.status
    view: RunView = {
        "run_id": checkpoint.run_id,
        "agent": (checkpoint.metadata or {}).get("agent"),
        "source": f"checkpoint v{checkpoint.version} of {versions} ({checkpoint.created_at})",
        "task": state.get("task"),
        "media": media_of(transcript),
        "status": status,
        "stop_reason": None,
        "usage": None,
        "duration_s": None,
        "output": None,
        "pending": [_call_dict(c) for c in calls],
        "errors": [],
        # what a checkpoint another version or a hand edit wrote holds that is not a run's
        "omissions": [f"unreadable in the checkpoint: {what}" for what in unreadable],
        "turns": [],
    }
    rows: dict[str, ToolRow] = {}
    for message in transcript:
        if not isinstance(message, Message):
            continue
        if message.role == "assistant":
            turn = _new_turn(len(view["turns"]) + 1, None)
            view["turns"].append(turn)
            turn["model_calls"].append(
                {
                    "model": None,
                    "latency_s": None,
                    "input_tokens": None,
                    "output_tokens": None,
                    "cost": None,
                    "finish": None,
                    "messages": None,
                    "text": message.text,
                    "under": None,
                    "error": None,
                }
            )
            for call in message.tool_calls:
                row = _tool_row(call.id, call.name, _arguments(call.arguments))
                rows[call.id] = row
                turn["tools"].append(row)
            if not message.tool_calls and status == "done":
                view["output"] = message.text
        elif message.role == "tool" and message.tool_call_id in rows:
            row = rows[message.tool_call_id]
            row["result"] = content_text(message.content)
            row["is_error"] = message.is_error
    _mark_pending(view)
    return view


def _short(value: object) -> str:
    """``value``'s type and the start of its repr, to name what a checkpoint holds."""
    return f"{type(value).__name__} {reprlib.repr(value)}"


def _mark_pending(view: RunView) -> None:
    """A pending call's row says it waits, rather than that no result was recorded."""
    waiting = {str(call.get("id")) for call in view["pending"]}
    for turn in view["turns"]:
        for row in turn["tools"]:
            if str(row["id"]) in waiting and row["result"] is None:
                row["result"] = "(pending: waiting for a person's approval)"


def _call_dict(call: ToolCall | JSONObject) -> CallRow:
    if isinstance(call, dict):
        return {
            "id": call.get("id"),
            "name": call.get("name"),
            "arguments": _arguments(call.get("arguments")),
        }
    return {"id": call.id, "name": call.name, "arguments": _arguments(call.arguments)}


def _arguments(raw: JSONValue) -> JSONValue:
    if isinstance(raw, str):
        try:
            parsed: JSONValue = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):  # not JSON, nested too deep, a 5,000-digit number
            return raw
        return parsed
    return raw


# ---------------------------------------------------------------------- HTML


def _seconds(value: object) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return "-"
    return f"{value * 1000:.0f} ms" if value >= 0.01 else f"{value * 1000:.2f} ms"


def _block(label: str, value: JSONValue, out: list[str], *, cls: str = "") -> None:
    """``value`` as a preformatted block, collapsed under ``label`` when it is long."""
    text = value if isinstance(value, str) else json_text(value)
    size = len(text)
    attr = f' class="{cls}"' if cls else ""
    if size > COLLAPSE_AT or cls:
        out.append(f"<details{attr}><summary>{_esc(label)} ({size} chars)</summary>")
        out.append(f"<pre>{_esc(text)}</pre></details>")
    else:
        out.append(f"<div>{_esc(label)}:<pre>{_esc(text)}</pre></div>")


def _render_tool(row: ToolRow, out: list[str]) -> None:
    error = " is-error" if row.get("is_error") else ""
    out.append(f'<div class="tool searchable{error}" data-call-id="{_esc(row.get("id"))}">')
    out.append(f"<b>tool {_esc(row.get('name'))}</b> <code>{_esc(row.get('id'))}</code>")
    out.append(f' <span class="badge">{_seconds(row.get("duration_s"))}</span>')
    for key, decided in (("verdict", row["verdict"]), ("guardrail", row["guardrail"])):
        if decided:
            kind = decided.split(" ", 1)[0]
            out.append(f' <span class="badge {_esc(kind)}">{key}: {_esc(decided)}</span>')
    if row.get("is_error"):
        out.append(' <span class="badge deny">error</span>')
    _block("arguments", row.get("arguments") if row.get("arguments") is not None else {}, out)
    result = row.get("result")
    _block("result", result if result is not None else "(no result recorded)", out, cls="result")
    if row.get("error"):
        out.append(f'<div class="err">{_esc(row["error"])}</div>')
    out.append("</div>")


def _render_turn(turn: TurnView, out: list[str]) -> None:
    label = f"Turn {turn['n']}" if turn["n"] else "Before the first turn"
    out.append(f'<section class="turn searchable" data-turn="{turn["n"]}">')
    out.append(f"<h3>{label} <span class='badge'>{_seconds(turn['duration_s'])}</span></h3>")
    for call in turn["model_calls"]:
        out.append('<div class="model">')
        out.append(f"<b>model {_esc(call['model'] or '')}</b>")
        if call.get("under"):
            out.append(f" <span class='badge'>for {_esc(call['under'])}</span>")
        out.append(f" <span class='badge'>latency {_seconds(call['latency_s'])}</span>")
        if call.get("input_tokens") is not None:
            tokens = f"{call['input_tokens']} in / {call['output_tokens']} out{usage_extra(call)}"
            out.append(f" <span class='badge'>tokens {_esc(tokens)}</span>")
        if call.get("cost") is not None:
            out.append(f" <span class='badge'>cost {_esc(call['cost'])}</span>")
        if call.get("finish"):
            out.append(f" <span class='badge'>{_esc(call['finish'])}</span>")
        if call.get("text"):
            _block("answer", call["text"], out)
        if call.get("error"):
            out.append(f'<div class="err">{_esc(call["error"])}</div>')
        out.append("</div>")
    for row in turn["tools"]:
        _render_tool(row, out)
    for fold in turn["folds"]:
        out.append('<div class="fold searchable">')
        if fold.get("error"):
            out.append(f"<b>fold failed</b>: {_esc(fold['error'])}")
        else:
            out.append(
                f"<b>fold</b>: {_esc(fold['messages'])} messages into a summary, tokens "
                f"{_esc(fold['tokens_before'])} → {_esc(fold['tokens_after'])}"
            )
        if fold.get("folded"):
            _block("what was folded", "\n".join(fold["folded"]), out, cls="folded")
        if fold.get("summary"):
            _block("summary", fold["summary"], out)
        out.append("</div>")
    out.append("</section>")


def _render_run(view: RunView, out: list[str]) -> None:
    status = str(view.get("status"))
    out.append(f'<article class="run" data-run-id="{_esc(view.get("run_id"))}">')
    out.append(f"<h2>run {_esc(view.get('run_id'))}</h2><div class='facts'>")
    out.append(f"<span>agent <b>{_esc(view.get('agent'))}</b></span>")
    out.append(f"<span class='status-{_esc(status)}'>status <b>{_esc(status)}</b></span>")
    out.append(f"<span>{len(view['turns'])} turn(s)</span>")
    usage = view["usage"]
    if usage is not None and usage["requests"] is not None:
        out.append(
            f"<span>tokens {_esc(usage.get('input_tokens'))} in / "
            f"{_esc(usage.get('output_tokens'))} out{_esc(usage_extra(usage))}, "
            f"{_esc(usage.get('requests'))} model call(s)</span>"
        )
        cost = usage.get("cost")
        shown = f"${cost:.4f}" if isinstance(cost, (int, float)) else "unknown"
        out.append(f"<span>cost <b>{_esc(shown)}</b></span>")
    if view.get("duration_s") is not None:
        out.append(f"<span>{_seconds(view['duration_s'])}</span>")
    out.append(f"<span>from {_esc(view.get('source'))}</span></div>")
    if view.get("task") is not None:
        _block("task", view["task"], out)
    render_media(view.get("media") or (), out)
    if view.get("stop_reason"):
        out.append(f"<div class='pending'>{_esc(status)}: {_esc(view['stop_reason'])}</div>")
    for call in view.get("pending") or ():
        out.append(
            f"<div class='pending searchable'>pending <b>{_esc(call.get('name'))}</b> "
            f"<code>{_esc(call.get('id'))}</code> waiting for approval"
        )
        if call.get("arguments") is not None:
            _block("arguments", call["arguments"], out)
        out.append("</div>")
    for item in view.get("omissions") or ():
        out.append(f"<div class='pending'>omitted: {_esc(item)}</div>")
    for error in view.get("errors") or ():
        plugin = f" (plugin {error['plugin']})" if error.get("plugin") else ""
        out.append(
            f"<div class='err searchable'>error in {_esc(error.get('span'))}{_esc(plugin)}: "
        )
        out.append(f"{_esc(error.get('error'))}</div>")
    for turn in view["turns"]:
        _render_turn(turn, out)
    if view.get("output") is not None:
        _block("output", view["output"], out)
    out.append("</article>")


@collector_paused()
def render_html(views: Iterable[RunView], title: str) -> str:
    """One self-contained page showing every run view: nothing in it is fetched."""
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        f"style-src 'unsafe-inline'; {SCRIPT_SRC}; {IMG_SRC}\">",
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<header><h1>agentkit run viewer: {_esc(title)}</h1>",
        "<input id='search' type='search' placeholder='search calls, arguments, results'>",
        "</header><main>",
    ]
    count = 0
    for view in views:
        _render_run(view, out)
        count += 1
    if not count:
        out.append("<p>No run in this trace.</p>")
    out.append(f"</main><script>{_SCRIPT}</script></body></html>")
    return "".join(out)


#: The token counts a provider reports beside input and output (Usage's cache and reasoning).
_EXTRA_TOKENS: tuple[_ExtraKey, ...] = (
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def _cache_and_reasoning(attrs: JSONObject) -> ExtraTokens:
    """A span's cache and reasoning token counts, when its provider reported them."""
    counts: ExtraTokens = {}
    for key in _EXTRA_TOKENS:
        if attrs.get(key):
            counts[key] = attrs[key]
    return counts


def usage_extra(counts: Mapping[str, object]) -> str:
    """`` (12 cached in, 3 cache writes, 40 reasoning)`` for the counts there are, else ``""``."""
    words = (
        ("cache_read_tokens", "cached in"),
        ("cache_write_tokens", "cache writes"),
        ("reasoning_tokens", "reasoning"),
    )
    said = [f"{counts[key]} {word}" for key, word in words if counts.get(key)]
    return f" ({', '.join(said)})" if said else ""
