"""The run viewer: what a run did, from its trace spans or its checkpoint, as one HTML page.

Two steps, so each source needs only the first: a *run view* (plain data: the run's status,
its turns, each turn's model calls, tool calls, verdicts and folds, pending calls, errors and
omissions) is built from a trace file's spans or from a run's latest checkpoint; then
:func:`render_html` writes it as one self-contained page (inline CSS and script, nothing
fetched), linear in the size of the run.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

from .._tracing import export_attributes
from .._tracing import export_error
from ._trace_file import collector_paused

#: Payloads longer than this (in characters) start collapsed.
COLLAPSE_AT = 400

_OMISSION_KEYS = ("compaction_rejected", "compaction_repaired", "omitted")


def _turn_of(span: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The nearest ``turn`` span above ``span`` within its run, or None."""
    seen = 0
    parent = by_id.get(span.get("parent_id") or "")
    while parent is not None and seen < len(by_id):
        if parent.get("name") == "turn":
            return parent
        if parent.get("name") == "run":
            return None
        parent = by_id.get(parent.get("parent_id") or "")
        seen += 1
    return None


def _new_turn(number: int, duration: float | None) -> dict[str, Any]:
    return {"n": number, "duration_s": duration, "model_calls": [], "tools": [], "folds": []}


def _payload(span: dict[str, Any]) -> dict[str, Any] | None:
    payload = span.get("payload")
    return payload if isinstance(payload, dict) else None


def _withheld(span: dict[str, Any]) -> str:
    if span.get("tainted"):
        return "(withheld: the run is secret-tainted)"
    return "(not recorded)"


def _error(span: dict[str, Any]) -> dict[str, Any]:
    return {
        "span": span.get("name"),
        "error": span.get("error"),
        "plugin": span.get("error_plugin"),
        "type": span.get("error_type"),
    }


def _as_exported(span: dict[str, Any]) -> dict[str, Any]:
    """``span`` (a trace file's) with its attributes and error as exporters record them.

    This version's files already hold only those; a file an older version or another writer
    made may hold a tainted span's text, or a value of any size, which the page must not show.
    """
    attributes = span.get("attributes")
    error = span.get("error")
    tainted = bool(span.get("tainted"))
    return {
        **span,
        "attributes": export_attributes(
            str(span.get("name")), attributes if isinstance(attributes, dict) else {}, tainted
        ),
        "error": export_error(
            None if error is None else str(error), span.get("error_type"), tainted
        ),
    }


@collector_paused()
def views_from_spans(spans: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One run view per ``run`` span of ``spans`` (a trace file's), in start order.

    Attributes and errors are shown as exporters record them (:func:`export_attributes`),
    whoever wrote the file.
    """
    views = _Views([_as_exported(span) for span in spans])
    for span in views.spans:
        views.add(span)
    return views.finish()


class _Views:
    """The run views being built from one trace's spans: runs, their turns and tool rows."""

    def __init__(self, spans: list[dict[str, Any]]) -> None:
        self.spans = spans
        self.by_id = {s["span_id"]: s for s in spans if isinstance(s.get("span_id"), str)}
        self.views = {run["span_id"]: _run_view(run) for run in spans if run.get("name") == "run"}
        self.turns: dict[str, dict[str, Any]] = {}
        self.tool_rows: dict[tuple[str, str], dict[str, Any]] = {}

    def run_of(self, span: dict[str, Any]) -> dict[str, Any] | None:
        node: dict[str, Any] | None = span
        for _ in range(len(self.by_id) + 1):
            if node is None:
                return None
            if node.get("name") == "run" and node.get("span_id") in self.views:
                return self.views[node["span_id"]]
            node = self.by_id.get(node.get("parent_id") or "")
        return None

    def turn_for(self, span: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
        turn = _turn_of(span, self.by_id)
        if turn is None:
            prelude: dict[str, Any] = view["_prelude"]
            return prelude
        return self.add_turn(turn, view)

    def add_turn(self, span: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
        made = self.turns.get(span["span_id"])
        if made is None:
            attrs = span.get("attributes") or {}
            made = _new_turn(int(attrs.get("turn") or 0), span.get("duration_s"))
            self.turns[span["span_id"]] = made
            view["turns"].append(made)
        return made

    def tool_row(self, view: dict[str, Any], turn: dict[str, Any], call_id: str, name: str) -> Any:
        key = (str(view["run_id"]), call_id)
        row = self.tool_rows.get(key)
        if row is None:
            row = dict.fromkeys(_TOOL_ROW_KEYS)
            row["id"], row["name"] = call_id, name
            self.tool_rows[key] = row
            turn["tools"].append(row)
        return row

    def add(self, span: dict[str, Any]) -> None:
        """Put one span (not a run's) into its run's view."""
        name = span.get("name")
        view = self.run_of(span)
        if view is None or name == "run":
            return
        attrs = span.get("attributes") or {}
        for key in _OMISSION_KEYS:
            if attrs.get(key):
                view["omissions"].append(f"{key.replace('_', ' ')}: {attrs[key]}")
        if name == "turn":
            self.add_turn(span, view)
            return
        turn = self.turn_for(span, view)
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

    def model_call(self, span: dict[str, Any], view: dict[str, Any], turn: dict[str, Any]) -> None:
        attrs = span.get("attributes") or {}
        payload = _payload(span)
        response = (payload or {}).get("response") or {}
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
                "text": _text(response.get("content")) if payload else _withheld(span),
                "under": span.get("parent") if span.get("parent") != "turn" else None,
                "error": span.get("error"),
            }
        )
        calls = response.get("tool_calls") if isinstance(response, dict) else None
        ids = attrs.get("tool_call_ids") or []
        names = attrs.get("tool_call_names") or []
        for i, call_id in enumerate(ids):
            row = self.tool_row(view, turn, call_id, names[i] if i < len(names) else "")
            if calls and i < len(calls) and isinstance(calls[i], dict):
                row["arguments"] = _arguments(calls[i].get("arguments"))

    def tool_call(self, span: dict[str, Any], view: dict[str, Any], turn: dict[str, Any]) -> None:
        attrs = span.get("attributes") or {}
        payload = _payload(span)
        row = self.tool_row(view, turn, str(attrs.get("call_id")), str(attrs.get("tool")))
        row["duration_s"] = span.get("duration_s")
        row["is_error"] = attrs.get("is_error")
        row["error"] = span.get("error")
        if payload is not None:
            row["arguments"] = payload.get("arguments")
            row["result"] = _text(payload.get("result"))
        else:
            row["result"] = _withheld(span)

    def verdict(self, span: dict[str, Any], view: dict[str, Any], turn: dict[str, Any]) -> None:
        """A ``verdict`` or ``guardrail`` span, on the row of the call it decided."""
        attrs = span.get("attributes") or {}
        name = str(span.get("name"))
        if name == "verdict":
            call_id = attrs.get("call_id")
        else:
            parent = self.by_id.get(span.get("parent_id") or "") or {}
            call_id = (parent.get("attributes") or {}).get("call_id")
        row = self.tool_row(view, turn, str(call_id), str(attrs.get("tool")))
        who = attrs.get("source") or attrs.get("guardrail") or ""
        reason = attrs.get("reason") or ""
        row[name] = verdict_text(attrs)
        if (attrs.get("decision") or "?") == "deny" and row["result"] is None:
            row["result"] = f"not run: denied by {who or 'a hook'}: {reason or 'no reason'}"
            row["is_error"] = True

    def finish(self) -> list[dict[str, Any]]:
        """Each run's view complete: pending calls marked, turns in order, errors once."""
        result = []
        for view in self.views.values():
            prelude = view.pop("_prelude")
            run_error = view.pop("_run_error")
            _mark_pending(view)
            if run_error is not None:
                view["errors"].append(run_error)
            view["turns"].sort(key=lambda t: t["n"])
            # an error that reached the run is also on the span that raised it: keep the first
            unique: dict[Any, dict[str, Any]] = {}
            for error in view["errors"]:
                unique.setdefault(error["error"], error)
            view["errors"] = list(unique.values())
            if prelude["model_calls"] or prelude["tools"] or prelude["folds"]:
                view["turns"].insert(0, prelude)
            result.append(view)
        return result


#: The fields of a tool call's row, in the order the page shows them.
_TOOL_ROW_KEYS = (
    "id",
    "name",
    "arguments",
    "result",
    "is_error",
    "duration_s",
    "verdict",
    "guardrail",
    "error",
)


def _run_view(run: dict[str, Any]) -> dict[str, Any]:
    """A run's view as its ``run`` span starts it: what it was asked, its status and usage."""
    attrs = run.get("attributes") or {}
    given = _payload(run) or {}
    return {
        "run_id": run.get("run_id"),
        "agent": attrs.get("agent"),
        "source": "trace",
        "task": given.get("task"),
        "status": attrs.get("status") or ("failed" if run.get("error") else "running"),
        "stop_reason": attrs.get("stop_reason"),
        "usage": {
            "input_tokens": attrs.get("input_tokens"),
            "output_tokens": attrs.get("output_tokens"),
            "requests": attrs.get("requests"),
            **_cache_and_reasoning(attrs),
        },
        "duration_s": run.get("duration_s"),
        "output": given.get("output"),
        "pending": [
            _call_dict(c) for c in given.get("pending") or () if isinstance(c, dict) and "id" in c
        ]
        or [{"id": i, "name": "", "arguments": None} for i in attrs.get("pending") or ()],
        "errors": [],
        "_run_error": _error(run) if run.get("error") else None,
        "omissions": [],
        "turns": [],
        "_prelude": _new_turn(0, None),
    }


def _fold_row(span: dict[str, Any]) -> dict[str, Any]:
    """A fold span as the page shows it: sizes, the summary and what it replaced."""
    attrs = span.get("attributes") or {}
    payload = _payload(span) or {}
    return {
        "messages": attrs.get("fold_messages"),
        "tokens_before": attrs.get("fold_tokens_before"),
        "tokens_after": attrs.get("fold_tokens_after"),
        "error": attrs.get("fold_error"),
        "summary": _text((payload.get("summary") or {}).get("content")),
        "folded": [_message_line(m) for m in payload.get("folded") or ()],
    }


def verdict_text(attributes: dict[str, Any]) -> str:
    """A verdict or guardrail span's decision, who made it and why: ``deny by policy: ...``."""
    who = attributes.get("source") or attributes.get("guardrail") or ""
    reason = attributes.get("reason") or ""
    decision = str(attributes.get("decision") or "?")
    return decision + (f" by {who}" if who else "") + (f": {reason}" if reason else "")


def view_from_checkpoint(checkpoint: Any, versions: int) -> dict[str, Any]:
    """A run view from a run's latest :class:`Checkpoint` (no timings: a checkpoint has none)."""
    state = checkpoint.state
    if not isinstance(state, dict):
        state = {}
    transcript = state.get("transcript") or []
    pending = state.get("pending") or []
    status = checkpoint.status
    view: dict[str, Any] = {
        "run_id": checkpoint.run_id,
        "agent": (checkpoint.metadata or {}).get("agent"),
        "source": f"checkpoint v{checkpoint.version} of {versions} ({checkpoint.created_at})",
        "task": state.get("task"),
        "status": status,
        "stop_reason": None,
        "usage": None,
        "duration_s": None,
        "output": None,
        "pending": [_call_dict(c) for c in pending],
        "errors": [],
        "omissions": [],
        "turns": [],
    }
    rows: dict[str, dict[str, Any]] = {}
    turn: dict[str, Any] | None = None
    for message in transcript:
        role = getattr(message, "role", None)
        if role == "assistant":
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
                row = {**_call_dict(call), "result": None, "is_error": None, "duration_s": None}
                row.update(verdict=None, guardrail=None, error=None)
                rows[call.id] = row
                turn["tools"].append(row)
            if not message.tool_calls and status == "done":
                view["output"] = message.text
        elif role == "tool" and message.tool_call_id in rows:
            row = rows[message.tool_call_id]
            row["result"] = _text(message.content)
            row["is_error"] = message.is_error
    _mark_pending(view)
    return view


def _mark_pending(view: dict[str, Any]) -> None:
    """A pending call's row says it waits, rather than that no result was recorded."""
    waiting = {str(call.get("id")) for call in view["pending"]}
    for turn in view["turns"]:
        for row in turn["tools"]:
            if row["id"] in waiting and row["result"] is None:
                row["result"] = "(pending: waiting for a person's approval)"


def _call_dict(call: Any) -> dict[str, Any]:
    if isinstance(call, dict):
        return {
            "id": call.get("id"),
            "name": call.get("name"),
            "arguments": _arguments(call.get("arguments")),
        }
    return {"id": call.id, "name": call.name, "arguments": _arguments(call.arguments)}


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return raw
    return raw


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        return "".join(
            str(p.get("text", "")) if isinstance(p, dict) and p.get("type") == "text" else ""
            for p in content
        ) or json.dumps(content, ensure_ascii=False)
    return json.dumps(content, ensure_ascii=False, default=repr)


def _message_line(message: Any) -> str:
    if isinstance(message, dict):
        return f"{message.get('role')}: {_text(message.get('content'))}"
    return str(message)


# ---------------------------------------------------------------------- HTML

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:12px 20px;position:sticky;top:0;z-index:2}
header h1{font-size:16px;margin:0 0 6px}
header input{width:min(480px,90%);padding:5px 8px;border-radius:4px;border:0}
main{padding:12px 20px}
.run{background:#fff;border:1px solid #d8dce3;border-radius:6px;margin-bottom:16px;
  padding:10px 14px}
.facts span{display:inline-block;margin-right:14px;color:#445}
.status-done{color:#17803d}.status-suspended{color:#a15c00}
.status-failed,.status-stopped{color:#b42318}
.turn{border-left:3px solid #7a8aa8;margin:10px 0;padding:4px 10px}
.turn h3{font-size:14px;margin:2px 0}
.model,.tool,.fold,.err,.pending{margin:4px 0;padding:4px 8px;border-radius:4px}
.model{background:#eef3fb}.tool{background:#f3f1fb}.fold{background:#eef8f0}
.err{background:#fdecea;color:#8a1c12}.pending{background:#fff4e0}
.tool.is-error{background:#fbeeee}
.badge{display:inline-block;font-size:12px;padding:0 6px;border-radius:8px;background:#dde3ee;
  margin-left:6px}
.badge.deny{background:#f6c9c4}.badge.ask{background:#ffe2a8}.badge.allow{background:#cfeed8}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;background:#fafbfc;padding:6px;
  border:1px solid #e4e7ec;border-radius:4px}
details>summary{cursor:pointer;color:#2a4a8a}
.hidden{display:none}
mark{background:#ffe66d}
"""

_SCRIPT = """
(function(){
  var box=document.getElementById('search');
  box.addEventListener('input',function(){
    var q=box.value.toLowerCase();
    document.querySelectorAll('.searchable').forEach(function(el){
      var hit=!q||el.textContent.toLowerCase().indexOf(q)>=0;
      el.classList.toggle('hidden',!hit);
      if(hit&&q){el.querySelectorAll('details').forEach(function(d){
        if(d.textContent.toLowerCase().indexOf(q)>=0){d.open=true;}});}
    });
  });
})();
"""


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _seconds(value: Any) -> str:
    if not isinstance(value, int | float):
        return "-"
    return f"{value * 1000:.0f} ms" if value >= 0.01 else f"{value * 1000:.2f} ms"


def _block(label: str, value: Any, out: list[str], *, cls: str = "") -> None:
    """``value`` as a preformatted block, collapsed under ``label`` when it is long."""
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    size = len(text)
    attr = f' class="{cls}"' if cls else ""
    if size > COLLAPSE_AT or cls:
        out.append(f"<details{attr}><summary>{_esc(label)} ({size} chars)</summary>")
        out.append(f"<pre>{_esc(text)}</pre></details>")
    else:
        out.append(f"<div>{_esc(label)}:<pre>{_esc(text)}</pre></div>")


def _render_tool(row: dict[str, Any], out: list[str]) -> None:
    error = " is-error" if row.get("is_error") else ""
    out.append(f'<div class="tool searchable{error}" data-call-id="{_esc(row.get("id"))}">')
    out.append(f"<b>tool {_esc(row.get('name'))}</b> <code>{_esc(row.get('id'))}</code>")
    out.append(f' <span class="badge">{_seconds(row.get("duration_s"))}</span>')
    for key in ("verdict", "guardrail"):
        if row.get(key):
            kind = str(row[key]).split(" ", 1)[0]
            out.append(f' <span class="badge {_esc(kind)}">{key}: {_esc(row[key])}</span>')
    if row.get("is_error"):
        out.append(' <span class="badge deny">error</span>')
    _block("arguments", row.get("arguments") if row.get("arguments") is not None else {}, out)
    result = row.get("result")
    _block("result", result if result is not None else "(no result recorded)", out, cls="result")
    if row.get("error"):
        out.append(f'<div class="err">{_esc(row["error"])}</div>')
    out.append("</div>")


def _render_turn(turn: dict[str, Any], out: list[str]) -> None:
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


def _render_run(view: dict[str, Any], out: list[str]) -> None:
    status = str(view.get("status"))
    out.append(f'<article class="run" data-run-id="{_esc(view.get("run_id"))}">')
    out.append(f"<h2>run {_esc(view.get('run_id'))}</h2><div class='facts'>")
    out.append(f"<span>agent <b>{_esc(view.get('agent'))}</b></span>")
    out.append(f"<span class='status-{_esc(status)}'>status <b>{_esc(status)}</b></span>")
    out.append(f"<span>{len(view['turns'])} turn(s)</span>")
    usage = view.get("usage") or {}
    if usage.get("requests") is not None:
        out.append(
            f"<span>tokens {_esc(usage.get('input_tokens'))} in / "
            f"{_esc(usage.get('output_tokens'))} out{_esc(usage_extra(usage))}, "
            f"{_esc(usage.get('requests'))} model call(s)</span>"
        )
    if view.get("duration_s") is not None:
        out.append(f"<span>{_seconds(view['duration_s'])}</span>")
    out.append(f"<span>from {_esc(view.get('source'))}</span></div>")
    if view.get("task") is not None:
        _block("task", view["task"], out)
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
def render_html(views: Iterable[dict[str, Any]], title: str) -> str:
    """One self-contained page showing every run view: nothing in it is fetched."""
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
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
_EXTRA_TOKENS = ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


def _cache_and_reasoning(attrs: dict[str, Any]) -> dict[str, Any]:
    """A span's cache and reasoning token counts, when its provider reported them."""
    return {key: attrs[key] for key in _EXTRA_TOKENS if attrs.get(key)}


def usage_extra(counts: dict[str, Any]) -> str:
    """`` (12 cached in, 3 cache writes, 40 reasoning)`` for the counts there are, else ``""``."""
    words = (
        ("cache_read_tokens", "cached in"),
        ("cache_write_tokens", "cache writes"),
        ("reasoning_tokens", "reasoning"),
    )
    said = [f"{counts[key]} {word}" for key, word in words if counts.get(key)]
    return f" ({', '.join(said)})" if said else ""
