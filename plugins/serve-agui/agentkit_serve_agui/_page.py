"""The chat page ``--ui`` serves at ``/``: one self-contained HTML file on the AG-UI endpoint.

No CDN and nothing fetched but the endpoint itself: the script and the style are inline, and
the content security policy admits exactly them, by their digests. The thread id is in the
address (``?thread=ID``), so a reload asks ``GET /threads/ID`` for the conversation and its
open approvals and carries on. A token given as ``#token=...`` is sent as a bearer token.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f6f6f4; color: #222; }
header { padding: 10px 16px; background: #2b2d42; color: #fff; font-size: 14px; }
header code { background: #44475a; padding: 1px 6px; border-radius: 4px; }
#log { max-width: 820px; margin: 0 auto; padding: 16px 16px 120px; }
.msg { margin: 10px 0; padding: 10px 14px; border-radius: 10px; white-space: pre-wrap; }
.user { background: #dbe9ff; margin-left: 15%; }
.assistant { background: #fff; border: 1px solid #ddd; margin-right: 15%; }
details.tool { margin: 8px 15% 8px 0; background: #fffbe8; border: 1px solid #e8d98a;
  border-radius: 8px; padding: 6px 12px; }
details.tool summary { cursor: pointer; font-family: monospace; }
details.tool pre { white-space: pre-wrap; margin: 6px 0; font-size: 13px; }
.approval { margin: 8px 15% 8px 0; padding: 10px 14px; border: 2px solid #e07a00;
  border-radius: 8px; background: #fff4e5; }
.approval button { margin-right: 8px; }
.error { color: #b00020; }
form { position: fixed; bottom: 0; left: 0; right: 0; background: #fff; padding: 12px;
  border-top: 1px solid #ddd; display: flex; gap: 8px; justify-content: center; }
textarea { width: min(700px, 70vw); height: 48px; font: inherit; }
"""

SCRIPT = """
"use strict";
const params = new URLSearchParams(location.search);
let thread = params.get("thread");
if (!thread) {
  thread = crypto.randomUUID();
  params.set("thread", thread);
  history.replaceState(null, "", "?" + params.toString());
}
document.getElementById("thread").textContent = thread;
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const headers = {"content-type": "application/json"};
if (token) headers["authorization"] = "Bearer " + token;
const log = document.getElementById("log");
const form = document.getElementById("form");
const input = document.getElementById("input");
const calls = new Map();
let texts = new Map();

function add(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = text;
  log.appendChild(el);
  el.scrollIntoView({block: "end"});
  return el;
}

function toolCall(id, name, args) {
  if (calls.has(id)) return calls.get(id);  // a resumed run announces its held call again
  const box = add("details", "tool");
  box.dataset.call = id;
  const summary = document.createElement("summary");
  summary.textContent = name;
  const argsEl = document.createElement("pre");
  argsEl.className = "args";
  argsEl.textContent = args || "";
  const result = document.createElement("pre");
  result.className = "result";
  box.append(summary, argsEl, result);
  calls.set(id, {box, args: argsEl, result});
  return calls.get(id);
}

function approval(interrupt) {
  const box = add("div", "approval");
  box.dataset.interrupt = interrupt.id;
  const what = (interrupt.metadata && interrupt.metadata.tool) || interrupt.tool || "a tool";
  box.append((interrupt.message || "approve " + what + "?") + " ");
  for (const [label, approved] of [["Approve", true], ["Deny", false]]) {
    const b = document.createElement("button");
    b.textContent = label;
    b.className = approved ? "approve" : "deny";
    b.onclick = () => { box.remove(); answer(interrupt.id, approved); };
    box.appendChild(b);
  }
}

function handle(e) {
  switch (e.type) {
    case "TEXT_MESSAGE_START": texts.set(e.messageId, add("div", "msg assistant", "")); break;
    case "TEXT_MESSAGE_CONTENT": texts.get(e.messageId).textContent += e.delta; break;
    case "TOOL_CALL_START": {
      const c = toolCall(e.toolCallId, e.toolCallName, "");
      c.args.textContent = "";
      break;
    }
    case "TOOL_CALL_ARGS": calls.get(e.toolCallId).args.textContent += e.delta; break;
    case "TOOL_CALL_RESULT": {
      const c = calls.get(e.toolCallId) || toolCall(e.toolCallId, "tool", "");
      c.result.textContent = "→ " + e.content;
      break;
    }
    case "RUN_FINISHED":
      if (e.outcome && e.outcome.type === "interrupt") e.outcome.interrupts.forEach(approval);
      break;
    case "RUN_ERROR": add("div", "msg error", "error: " + e.message); break;
  }
}

async function run(body) {
  body = Object.assign({threadId: thread, runId: crypto.randomUUID(), messages: [], state: null,
                        tools: [], context: [], forwardedProps: null}, body);
  const response = await fetch("agent", {method: "POST", headers, body: JSON.stringify(body)});
  if (!response.ok) {
    const err = await response.json().catch(() => ({error: response.statusText}));
    add("div", "msg error", "error: " + err.error);
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let cut;
    while ((cut = buffer.indexOf("\\n\\n")) >= 0) {
      const chunk = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      for (const line of chunk.split("\\n")) {
        if (line.startsWith("data: ")) handle(JSON.parse(line.slice(6)));
      }
    }
  }
  document.body.dataset.idle = "yes";
}

function answer(id, approved) {
  document.body.dataset.idle = "no";
  run({resume: [{interruptId: id, status: "resolved", payload: {approved}}]});
}

form.onsubmit = (ev) => {
  ev.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  add("div", "msg user", text);
  document.body.dataset.idle = "no";
  run({messages: [{id: crypto.randomUUID(), role: "user", content: text}]});
};
input.onkeydown = (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); }
};

async function load() {
  const response = await fetch("threads/" + encodeURIComponent(thread), {headers});
  if (response.status === 404) { document.body.dataset.idle = "yes"; return; }  // a new thread
  if (!response.ok) { add("div", "msg error", "error: " + response.statusText); return; }
  const history = await response.json();
  for (const m of history.messages) {
    if (m.role === "user") add("div", "msg user", m.content);
    else if (m.role === "assistant") {
      if (m.content) add("div", "msg assistant", m.content);
      for (const c of m.toolCalls || []) toolCall(c.id, c.function.name, c.function.arguments);
    } else if (m.role === "tool") {
      const c = calls.get(m.toolCallId);
      if (c) c.result.textContent = "→ " + m.content;
    }
  }
  history.interrupts.forEach(approval);
  document.body.dataset.idle = "yes";
}
load();
"""

PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentkit chat</title><style>{STYLE}</style></head>
<body data-idle="no">
<header>agentkit · thread <code id="thread"></code></header>
<main id="log"></main>
<form id="form"><textarea id="input" placeholder="Say something (Enter sends)"></textarea>
<button type="submit">Send</button></form>
<script>{SCRIPT}</script>
</body></html>
"""


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


#: The page's content security policy: its own script and style, and requests to itself only.
POLICY = (
    f"default-src 'none'; script-src {_digest(SCRIPT)}; style-src {_digest(STYLE)}; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
