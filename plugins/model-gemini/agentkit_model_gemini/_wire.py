"""agentkit messages to and from the Gemini wire, in the google-genai SDK's dict form.

The SDK takes ``contents`` and ``config`` as plain dicts with snake_case keys
(``function_call``, ``thought_signature``...) and writes the camelCase JSON the API reads, so
these converters build dicts and never import the SDK.

A model turn's parts are kept in order in ``Message.metadata["reasoning"]`` when it carries
thought summaries or thought signatures: ``{"model": <Model.name>, "parts": [...]}``, one entry
per part — ``{"thought": <summary text>}``, ``{"text": <number of characters>}`` (a slice of the
message's text) or ``{"call": <tool call id>}``, each with ``"signature"`` (the part's thought
signature, base64) when the API sent one. The message itself stays the source of truth for
text and calls; the entries say where the signatures go when the turn is sent back.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.content import Part
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import StreamEvent
from agentkit_core.plugin import token_count

from ._parts import part_to_gemini

#: ``Message.metadata`` key of what only the Gemini wire says: ``{"generated_ids": [...]}``
#: names the tool call ids this plugin made up for calls the API sent without an id (they are
#: left out again when the turn goes back).
WIRE = "gemini"

#: Gemini finish reasons that mean the answer was stopped by a content filter.
SAFETY_FINISH = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)

#: ModelSettings keys with no Gemini field: the API decides on parallel calls itself.
IGNORED_SETTINGS: frozenset[str] = frozenset({"parallel_tool_calls"})

_SAME_NAME = ("temperature", "top_p", "top_k", "seed", "presence_penalty", "frequency_penalty")
_HANDLED = frozenset(
    {*_SAME_NAME, "max_tokens", "stop", "tool_choice", "reasoning_effort", "timeout", "extra_body"}
)
_TOOL_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


# ---------------------------------------------------------------------------- settings


def settings_to_gemini(settings: ModelSettings, *, tools: bool) -> dict[str, Any]:
    """The ``GenerateContentConfig`` fields for ``settings`` (snake_case, the SDK's form).

    ``max_tokens`` goes as ``max_output_tokens``, ``stop`` as ``stop_sequences``,
    ``tool_choice`` as ``tool_config.function_calling_config`` (``required`` is mode ``ANY``, a
    tool's name is ``ANY`` limited to that function) and only with ``tools``,
    ``reasoning_effort`` as ``thinking_config`` (``"none"`` a thinking budget of 0, any other
    as that ``thinking_level``). ``timeout`` and ``extra_body`` travel in the request's
    ``http_options`` (see :func:`http_options`); :data:`IGNORED_SETTINGS` are left out, and any
    other key is a ConfigError naming it.
    """
    unknown = sorted(set(settings) - _HANDLED - IGNORED_SETTINGS)
    if unknown:
        raise ConfigError(
            f"ModelRequest.settings has {', '.join(map(repr, unknown))}, which is not a "
            "ModelSettings key; put a provider's own field in settings['extra_body']",
            value=unknown,
            source="ModelRequest.settings",
        )
    config: dict[str, Any] = {k: settings[k] for k in _SAME_NAME if k in settings}  # type: ignore[literal-required]
    if "max_tokens" in settings:
        config["max_output_tokens"] = settings["max_tokens"]
    if "stop" in settings:
        config["stop_sequences"] = list(settings["stop"])
    if tools and "tool_choice" in settings:
        choice = settings["tool_choice"]
        mode = _TOOL_MODES.get(choice)
        calling: dict[str, Any] = {"mode": mode or "ANY"}
        if mode is None:
            calling["allowed_function_names"] = [choice]
        config["tool_config"] = {"function_calling_config": calling}
    effort = settings.get("reasoning_effort")
    if effort is not None:
        config["thinking_config"] = (
            {"thinking_budget": 0} if effort == "none" else {"thinking_level": effort.upper()}
        )
    return config


def http_options(settings: ModelSettings, timeout: float) -> dict[str, Any]:
    """The request's ``http_options``: its timeout (ms, as the SDK counts) and ``extra_body``."""
    options: dict[str, Any] = {"timeout": round(timeout * 1000)}
    extra = settings.get("extra_body")
    if extra:
        options["extra_body"] = dict(extra)
    return options


# ---------------------------------------------------------------------------- usage


def usage_from_gemini(meta: Mapping[str, Any] | None) -> Usage:
    """``Usage`` from ``usage_metadata`` (snake_case).

    input: ``prompt_token_count`` (cached tokens included, as the API counts them) plus
    ``tool_use_prompt_token_count``; output: ``candidates_token_count`` plus
    ``thoughts_token_count`` (the API counts thoughts apart; agentkit's output counts every
    generated token); cache read: ``cached_content_token_count``; reasoning:
    ``thoughts_token_count``. Gemini charges no cache write on a request, so that stays 0.
    """
    meta = meta or {}
    # every count, read or not, is checked: a negative one would lift a token or cost budget
    counts = {k: token_count(meta, k, "usage_metadata") for k in meta if k.endswith("_count")}
    thoughts = counts.get("thoughts_token_count", 0)
    return Usage(
        input_tokens=counts.get("prompt_token_count", 0)
        + counts.get("tool_use_prompt_token_count", 0),
        output_tokens=counts.get("candidates_token_count", 0) + thoughts,
        requests=1,
        cache_read_tokens=counts.get("cached_content_token_count", 0),
        reasoning_tokens=thoughts,
    )


def finish_reason(reason: str | None, *, calls: bool) -> str | None:
    """The finish reason agentkit names for Gemini's ``reason``.

    ``stop`` (``tool_calls`` when the turn has calls), ``length``, ``content_filter`` for
    :data:`SAFETY_FINISH`, and any other lower-cased.
    """
    if reason is None:
        return None
    if reason == "STOP":
        return "tool_calls" if calls else "stop"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in SAFETY_FINISH:
        return "content_filter"
    return reason.lower()


# ---------------------------------------------------------------------------- answers


def _b64(signature: Any) -> str | None:
    if signature is None or signature == b"":
        return None
    if isinstance(signature, (bytes, bytearray)):
        return base64.b64encode(signature).decode("ascii")
    return str(signature)


class Assembler:
    """A model turn built from its parts, whole or streamed in pieces.

    ``feed`` takes one part (a dict in the SDK's form) and returns the stream event it shows:
    a text delta, a thought summary's delta as a ``"reasoning"`` event, a tool call, or None
    (an empty piece, a signature alone). Consecutive text (or thought) pieces join into one
    entry until one carries a signature, which ends it, as a streamed turn sends them.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self.entries: list[dict[str, Any]] = []
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.generated: list[str] = []

    def feed(self, part: Mapping[str, Any], where: str) -> StreamEvent | None:
        signature = _b64(part.get("thought_signature"))
        call = part.get("function_call")
        if call is not None:
            return StreamEvent("tool_call", tool_call=self._call(call, signature, where))
        text: str | None = part.get("text")
        if part.get("thought"):
            self._extend("thought", text or "", signature)
            return StreamEvent("reasoning", text=text) if text else None
        if text is not None:
            self._extend("text", text, signature)
            self.text.append(text)
            return StreamEvent("text", text=text) if text else None
        if signature is not None:  # a signature alone, as a stream may send one last
            self._extend("text", "", signature)
        return None

    def _extend(self, kind: str, text: str, signature: str | None) -> None:
        last = self.entries[-1] if self.entries else None
        if last is not None and kind in last and "signature" not in last:
            last[kind] += len(text) if kind == "text" else text
        else:
            last = {kind: len(text) if kind == "text" else text}
            self.entries.append(last)
        if signature is not None:
            last["signature"] = signature

    def _call(self, call: Mapping[str, Any], signature: str | None, where: str) -> ToolCall:
        name = call.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}.function_call has no name")
        args = call.get("args")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ValueError(f"{where}.function_call.args is not an object: {args!r:.80}")
        id_ = call.get("id")
        taken = {c.id for c in self.calls}  # results and decisions go by id: one id, one call
        if id_ and str(id_) in taken:
            raise ValueError(
                f"{where}.function_call.id {id_!r} repeats an earlier call's id; each call of "
                "an answer needs its own id"
            )
        if not id_:
            id_ = next(
                f"call_{n}"
                for n in range(len(self.calls), len(taken) * 2 + 2)
                if f"call_{n}" not in taken
            )
            self.generated.append(id_)
        made = ToolCall(str(id_), name, json.dumps(args, ensure_ascii=False))
        self.calls.append(made)
        entry: dict[str, Any] = {"call": made.id}
        if signature is not None:
            entry["signature"] = signature
        self.entries.append(entry)
        return made

    def message(self) -> Message:
        """The assistant message, its reasoning in metadata when it has any."""
        message = Message.assistant("".join(self.text), self.calls)
        if any("thought" in e or "signature" in e for e in self.entries):
            message.metadata[REASONING] = {"model": self.model, "parts": self.entries}
        if self.generated:
            message.metadata[WIRE] = {"generated_ids": list(self.generated)}
        return message


# ---------------------------------------------------------------------------- requests


def messages_to_gemini(
    messages: Sequence[Message], *, model: str
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(system_instruction, contents)`` for ``messages``.

    The leading system messages become the system instruction (one text part each); a later
    one becomes a user turn, Gemini having no system role in ``contents``. Consecutive tool
    results go in one user turn, as the API wants the answers to one turn's calls together.
    Reasoning is sent back only when its ``"model"`` is ``model``.
    """
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    system = {"parts": [{"text": m.text} for m in messages[:lead]]} if lead else None
    generated: set[str] = set()
    names: dict[str, str] = {}
    contents: list[dict[str, Any]] = []
    for index, m in enumerate(messages[lead:], lead):
        where = f"messages[{index}]"
        if m.role == "tool":
            part = _tool_part(m, names, generated, where)
            last = contents[-1] if contents else None
            answers = last is not None and "function_response" in last["parts"][-1]
            if last is not None and answers:
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
        elif m.role == "assistant":
            ids = (m.metadata.get(WIRE) or {}).get("generated_ids") or ()
            generated.update(ids)
            names.update((c.id, c.name) for c in m.tool_calls)
            contents.append({"role": "model", "parts": _model_parts(m, model, generated, where)})
        else:
            contents.append({"role": "user", "parts": _user_parts(m.content, where)})
    return system, contents


def _user_parts(
    content: str | Sequence[Mapping[str, Any] | Part], where: str
) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    return [_content_part(p, f"{where}.content[{i}]") for i, p in enumerate(content)]


def _content_part(part: Mapping[str, Any] | Part, where: str) -> dict[str, Any]:
    """One content part (typed, or OpenAI-style) as a Gemini part."""
    if not isinstance(part, Mapping):
        return part_to_gemini(part)
    kind = part.get("type")
    if kind == "text":
        return {"text": str(part.get("text", ""))}
    if kind == "image_url":
        url = (part.get("image_url") or {}).get("url", "")
        return _url_part(url, where, mime=None)
    if kind == "input_audio":
        audio = part.get("input_audio") or {}
        fmt = audio.get("format", "wav")
        return {"inline_data": {"mime_type": f"audio/{fmt}", "data": audio.get("data", "")}}
    if kind == "file":
        data = (part.get("file") or {}).get("file_data", "")
        return _url_part(data, where, mime="application/octet-stream")
    raise ConfigError(
        f"{where} is a {kind!r} content part, which the gemini model cannot send; it takes "
        "'text', 'image_url', 'input_audio' and 'file' (a data: URL) parts",
        value=kind,
        source=where,
    )


def _url_part(url: str, where: str, *, mime: str | None) -> dict[str, Any]:
    """A ``data:`` URL as inline data; any other URL as file data (``gs://``, ``https://``)."""
    if url.startswith("data:"):
        head, sep, data = url[5:].partition(",")
        media, _, encoding = head.partition(";")
        if not sep or encoding != "base64":
            raise ConfigError(
                f"{where} holds a data: URL that is not base64 ({url[:40]!r}...); encode it as "
                "data:<mime>;base64,<data>",
                value=url[:40],
                source=where,
            )
        mime_type = media or mime or "application/octet-stream"
        return {"inline_data": {"mime_type": mime_type, "data": data}}
    return {"file_data": {"file_uri": url}}


def _tool_part(
    m: Message, names: Mapping[str, str], generated: set[str], where: str
) -> dict[str, Any]:
    call_id = m.tool_call_id or ""
    name = m.name or names.get(call_id)
    if not name:
        raise ConfigError(
            f"{where} is a tool result for call {call_id!r} with no tool name, and no earlier "
            "assistant message made that call; Gemini needs the function's name",
            value=call_id,
            source=where,
        )
    text_parts: list[str] = []
    media: list[dict[str, Any]] = []
    if isinstance(m.content, str):
        text_parts.append(m.content)
    else:
        for i, p in enumerate(m.content):
            part = _content_part(p, f"{where}.content[{i}]")
            if "text" in part:
                text_parts.append(part["text"])
            else:
                media.append(part)
    response: dict[str, Any] = {
        "name": name,
        "response": {"error" if m.is_error else "result": "".join(text_parts)},
    }
    if call_id and call_id not in generated:
        response["id"] = call_id
    if media:
        response["parts"] = media
    return {"function_response": response}


def _model_parts(m: Message, model: str, generated: set[str], where: str) -> list[dict[str, Any]]:
    reasoning = m.metadata.get(REASONING)
    entries: list[Mapping[str, Any]] = []
    if isinstance(reasoning, Mapping) and reasoning.get("model") == model:
        entries = [e for e in reasoning.get("parts") or () if isinstance(e, Mapping)]
    calls = {c.id: c for c in m.tool_calls}
    text = m.text
    lengths = [e["text"] for e in entries if isinstance(e.get("text"), int)]
    call_ids = [e["call"] for e in entries if "call" in e]
    parts: list[dict[str, Any]] = []
    if sum(lengths) == len(text) and call_ids == list(calls):
        at = 0
        for e in entries:  # the turn as the API sent it: every part where it was
            if "thought" in e:
                parts.append({"text": str(e["thought"]), "thought": True})
            elif "call" in e:
                parts.append(_call_part(calls[e["call"]], generated, where))
            elif isinstance(e.get("text"), int):
                parts.append({"text": text[at : at + e["text"]]})
                at += e["text"]
            else:
                continue
            if e.get("signature"):
                parts[-1]["thought_signature"] = e["signature"]
    else:  # edited since: thoughts, the text, then the calls, signatures kept on calls by id
        signatures = {e["call"]: e.get("signature") for e in entries if "call" in e}
        for e in entries:
            if "thought" in e:
                parts.append({"text": str(e["thought"]), "thought": True})
                if e.get("signature"):
                    parts[-1]["thought_signature"] = e["signature"]
        if text:
            parts.append({"text": text})
        for call in m.tool_calls:
            parts.append(_call_part(call, generated, where))
            if signatures.get(call.id):
                parts[-1]["thought_signature"] = signatures[call.id]
    return parts or [{"text": ""}]


def _call_part(call: ToolCall, generated: set[str], where: str) -> dict[str, Any]:
    try:
        args = call.parsed_arguments()
    except ValueError as exc:
        raise ConfigError(
            f"{where}: the arguments of tool call {call.id!r} ({call.name}) are not JSON ({exc}); "
            "Gemini takes them as an object",
            value=call.arguments[:80],
            source=where,
        ) from exc
    if not isinstance(args, dict):
        raise ConfigError(
            f"{where}: the arguments of tool call {call.id!r} ({call.name}) are not a JSON "
            "object; Gemini takes them as an object",
            value=call.arguments[:80],
            source=where,
        )
    body: dict[str, Any] = {"name": call.name, "args": args}
    if call.id not in generated:
        body["id"] = call.id
    return {"function_call": body}


# ---------------------------------------------------------------------------- back again


def messages_from_gemini(
    system: Mapping[str, Any] | None, contents: Iterable[Mapping[str, Any]], *, model: str
) -> list[Message]:
    """The messages :func:`messages_to_gemini` sent: its inverse on what Gemini accepts.

    A model turn is read as an answer is (thoughts and signatures into the reasoning), a user
    turn of function responses as one tool message each (a response without an id takes the
    made-up id of the call it answers), any other user turn as one user message.
    """
    out = [Message.system(str(p.get("text", ""))) for p in (system or {}).get("parts") or ()]
    pending: list[ToolCall] = []
    for index, content in enumerate(contents):
        parts = content.get("parts") or []
        where = f"contents[{index}]"
        if content.get("role") == "model":
            assembler = Assembler(model)
            for i, part in enumerate(parts):
                assembler.feed(part, f"{where}.parts[{i}]")
            message = assembler.message()
            pending = [c for c in message.tool_calls if c.id in assembler.generated]
            out.append(message)
        elif parts and all("function_response" in p for p in parts):
            for part in parts:
                out.append(_tool_message(part["function_response"], pending))
        else:
            out.append(Message.user(_user_content(parts)))
    return out


def _tool_message(response: Mapping[str, Any], pending: list[ToolCall]) -> Message:
    name = response.get("name", "")
    call_id = response.get("id")
    if not call_id:
        match = next((c for c in pending if c.name == name), None)
        if match is not None:
            pending.remove(match)
        call_id = match.id if match is not None else ""
    body = response.get("response") or {}
    is_error = "error" in body
    text = str(body.get("error" if is_error else "result", ""))
    media = [_part_from_gemini(p) for p in response.get("parts") or ()]
    content: str | tuple[dict[str, Any], ...] = (
        (({"type": "text", "text": text},) if text else ()) + tuple(media) if media else text
    )
    return Message.tool(call_id, content, name=name, is_error=is_error)


def _user_content(parts: Sequence[Mapping[str, Any]]) -> str | tuple[dict[str, Any], ...]:
    if len(parts) == 1 and "text" in parts[0]:
        return str(parts[0]["text"])
    return tuple(_part_from_gemini(p) for p in parts)


def _part_from_gemini(part: Mapping[str, Any]) -> dict[str, Any]:
    if "text" in part:
        return {"type": "text", "text": str(part["text"])}
    inline = part.get("inline_data")
    if inline is not None:
        mime = inline.get("mime_type", "")
        data = inline.get("data", "")
        if isinstance(data, (bytes, bytearray)):
            data = base64.b64encode(data).decode("ascii")
        if mime.startswith("image/"):
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
        if mime.startswith("audio/"):
            return {"type": "input_audio", "input_audio": {"data": data, "format": mime[6:]}}
        return {"type": "file", "file": {"file_data": f"data:{mime};base64,{data}"}}
    uri = (part.get("file_data") or {}).get("file_uri", "")
    return {"type": "image_url", "image_url": {"url": uri}}
