"""The Chat Completions wire format: messages to and from agentkit's Message, without loss.

A :class:`~agentkit_core.Message` holds what every provider shares. What only this wire says
(null, absent or empty content; an empty or null ``tool_calls``; the ``developer`` role; a call's
``type`` and shape; keys agentkit has no field for, such as ``refusal`` or ``audio``) rides along
in ``message.metadata["openai"]`` and is written back while the message still says what it said:
``message_to_openai(message_from_openai(d)) == d`` for every message the wire allows. A message
edited since (a call removed, its text replaced) is written from its fields where what rode along
no longer fits: the developer role of a message still a system message stays, the wire shape of a
call still in it stays, the null content of a message whose content is still empty stays.

A model's answer is read with ``response=True``: only what a request may carry back is kept
(a response's ``annotations`` or a server's ``reasoning_content`` are refused in a request), and
a call without an id gets ``call_<index>``, so its result has an id to answer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import token_count

from ._parts import part_to_chat

#: The metadata key of what only this wire says about a message.
WIRE = "openai"

_ROLES = ("system", "developer", "user", "assistant", "tool")
_MODELLED = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
#: What a request may carry on an assistant message besides the modelled keys.
_ASSISTANT_REQUEST_KEYS = frozenset({"refusal", "audio", "function_call"})
_ABSENT = "absent"  # how the residue says a key was not there (JSON has no sentinel)
_MISSING = object()


def message_to_openai(message: Message) -> dict[str, Any]:
    """One message as a Chat Completions ``messages[]`` entry."""
    residue: dict[str, Any] = message.metadata.get(WIRE) or {}
    content: Any = message.content
    if not isinstance(content, str):
        content = [part_to_chat(part) for part in content]
    role: str = message.role
    if role == "system" and residue.get("role") == "developer":
        role = "developer"
    out: dict[str, Any] = {"role": role}
    if content == "" and "content" in residue:
        if residue["content"] != _ABSENT:
            out["content"] = residue["content"]
    elif content == "" and message.role == "assistant" and message.tool_calls:
        out["content"] = None  # the wire's own way to say "only calls"
    else:
        out["content"] = content
    if message.tool_calls:
        out["tool_calls"] = _calls_to_openai(message.tool_calls, residue.get("calls") or ())
    elif "tool_calls" in residue:
        out["tool_calls"] = copy.deepcopy(residue["tool_calls"])
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None and (message.role != "tool" or residue.get("name")):
        out["name"] = message.name
    for key, value in (residue.get("keys") or {}).items():
        out.setdefault(key, copy.deepcopy(value))
    return out


def _calls_to_openai(calls: Sequence[ToolCall], shapes: Iterable[Any]) -> list[dict[str, Any]]:
    """Each call in the wire shape it came in while it is unchanged, else as a function call.

    While every shaped call is still at its place, shapes go back by place (two equal calls in
    different shapes keep theirs); after an edit, by what the call says.
    """
    shapes = list(shapes)
    keys = [(call.id, call.name, call.arguments) for call in calls]
    if all(
        0 <= shape.get("index", -1) < len(keys) and keys[shape["index"]] == tuple(shape["call"])
        for shape in shapes
    ):
        by_place = {shape["index"]: shape["wire"] for shape in shapes}
        return [
            copy.deepcopy(by_place[i]) if i in by_place else _function_call(call)
            for i, call in enumerate(calls)
        ]
    unused = [(tuple(shape["call"]), shape["wire"]) for shape in shapes]
    out = []
    for call, key in zip(calls, keys, strict=True):
        found = next((i for i, (k, _) in enumerate(unused) if k == key), None)
        if found is None:
            out.append(_function_call(call))
        else:
            out.append(copy.deepcopy(unused.pop(found)[1]))
    return out


def _function_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def message_from_openai(data: Any, *, response: bool = False) -> Message:
    """Parse one ``messages[]`` entry; with ``response=True``, a response's ``choices[].message``.

    Raises :class:`~agentkit_core.plugin.ProviderResponseError` naming what is malformed.
    """
    if not isinstance(data, dict):
        raise _malformed(data, "a message must be a JSON object")
    role = data.get("role")
    if role not in _ROLES:
        raise _malformed(data, f"unknown message role {role!r}; the roles are {', '.join(_ROLES)}")
    residue: dict[str, Any] = {}
    if role == "developer":
        residue["role"] = "developer"
    content = _content(data, residue)
    calls = _calls(data, residue, response)
    tool_call_id = _optional_str(data, "tool_call_id")
    name = _optional_str(data, "name")
    if name is not None and role == "tool":
        residue["name"] = True
    keys = {
        k: v
        for k, v in data.items()
        if k not in _MODELLED or (v is None and k in ("tool_call_id", "name"))
    }
    if response:
        # only what a request may carry back, and no key that says nothing
        residue = {}
        keys = {k: v for k, v in keys.items() if k in _ASSISTANT_REQUEST_KEYS and v is not None}
    if keys:
        residue["keys"] = keys
    message = Message(
        role="system" if role == "developer" else role,
        content=content,
        tool_calls=calls,
        tool_call_id=tool_call_id,
        name=name,
    )
    if residue:
        message.metadata[WIRE] = residue
    return message


def _content(data: dict[str, Any], residue: dict[str, Any]) -> str | tuple[dict[str, Any], ...]:
    raw = data.get("content", _MISSING)
    if isinstance(raw, list):
        if not all(isinstance(part, dict) for part in raw):
            raise _malformed(data, "every content part must be a JSON object")
        return tuple(raw)
    if raw is _MISSING or raw is None or raw == "":
        # how the wire wrote "no content", when message_to_openai would write it otherwise
        expected = None if data.get("role") == "assistant" and data.get("tool_calls") else ""
        literal = _ABSENT if raw is _MISSING else raw
        if literal != expected:
            residue["content"] = literal
        return ""
    if not isinstance(raw, str):
        raise _malformed(data, f"content must be a string, a list of parts or null, not {raw!r}")
    return raw


def _calls(data: dict[str, Any], residue: dict[str, Any], response: bool) -> tuple[ToolCall, ...]:
    if "tool_calls" not in data:
        return ()
    raw = data["tool_calls"]
    if raw is None or raw == []:
        residue["tool_calls"] = raw
        return ()
    if not isinstance(raw, list):
        raise _malformed(data, f"tool_calls must be a list, not {raw!r:.80}")
    calls = []
    shapes = []
    for index, wire in enumerate(raw):
        call = _call(data, wire, index, response)
        calls.append(call)
        if wire != _function_call(call):
            shapes.append(
                {"index": index, "call": [call.id, call.name, call.arguments], "wire": wire}
            )
    if shapes and not response:
        residue["calls"] = shapes
    return tuple(calls)


def _call(data: dict[str, Any], wire: Any, index: int, response: bool) -> ToolCall:
    """One tool call of any type: ``{"type": t, t: {"name", "arguments" or "input"}}``."""
    if not isinstance(wire, dict):
        raise _malformed(data, f"tool call {index} must be a JSON object, not {wire!r:.80}")
    kind = wire.get("type")
    body = wire.get(kind) if isinstance(kind, str) and isinstance(wire.get(kind), dict) else None
    body = body if body is not None else wire.get("function")
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise _malformed(data, f"tool call {index} has no function name")
    arguments = body.get("arguments", body.get("input"))
    if not isinstance(arguments, str):
        arguments = "{}" if arguments is None else json.dumps(arguments)
    call_id = wire.get("id")
    call_id = call_id if isinstance(call_id, str) else ""
    if response and not call_id:
        call_id = f"call_{index}"
    return ToolCall(call_id, body["name"], arguments)


def _optional_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _malformed(data, f"{key} must be a string, not {value!r:.80}")
    return value


def _malformed(data: Any, why: str) -> ProviderResponseError:
    return ProviderResponseError(f"not an OpenAI chat message ({why}): {data!r:.200}")


def messages_to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """A transcript as the Chat Completions ``messages`` array."""
    return [message_to_openai(m) for m in messages]


def messages_from_openai(data: Iterable[Any]) -> list[Message]:
    """The Chat Completions ``messages`` array as a transcript."""
    return [message_from_openai(d) for d in data]


def usage_from_openai(data: dict[str, Any] | None) -> Usage:
    """A ``usage`` object (absent fields count as zero) as :class:`~agentkit_core.Usage`.

    ``prompt_tokens_details.cached_tokens`` (prompt tokens read from OpenAI's prompt cache,
    counted in ``prompt_tokens`` too) is ``cache_read_tokens``;
    ``completion_tokens_details.reasoning_tokens`` (counted in ``completion_tokens``) is
    ``reasoning_tokens``.
    """
    data = data or {}
    return Usage(
        token_count(data, "prompt_tokens", "usage"),
        token_count(data, "completion_tokens", "usage"),
        requests=1,
        cache_read_tokens=token_count(
            data.get("prompt_tokens_details"), "cached_tokens", "usage.prompt_tokens_details"
        ),
        reasoning_tokens=token_count(
            data.get("completion_tokens_details"),
            "reasoning_tokens",
            "usage.completion_tokens_details",
        ),
    )


#: ModelSettings keys the Chat Completions wire has no field for: left out of the body (a
#: server that reads one takes it through ``extra_body``).
IGNORED_SETTINGS: frozenset[str] = frozenset({"top_k"})
#: ModelSettings keys sent under the same name.
_SAME_NAME = (
    "temperature",
    "top_p",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "reasoning_effort",
)
#: What the client itself reads (``timeout``) or maps otherwise.
_HANDLED = frozenset(
    {"timeout", "max_tokens", "tool_choice", "parallel_tool_calls", "extra_body", *_SAME_NAME}
)
_TOOL_CHOICES = ("auto", "none", "required")


def check_settings(settings: ModelSettings, known: frozenset[str]) -> None:
    """Raise a ConfigError naming every key of ``settings`` that is not in ``known``."""
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ConfigError(
            f"ModelRequest.settings has {', '.join(map(repr, unknown))}, which is not a "
            "ModelSettings key; put a provider's own field in settings['extra_body']",
            value=unknown,
            source="ModelRequest.settings",
        )


def settings_to_openai(
    settings: ModelSettings, *, tools: bool, max_tokens_field: str = "max_completion_tokens"
) -> dict[str, Any]:
    """The request body's fields for ``settings`` (a :class:`~agentkit_core.ModelSettings`).

    ``max_tokens`` goes as ``max_tokens_field``; ``tool_choice`` as is for ``auto``, ``none``
    and ``required``, and a tool's name as the choice of that function; ``tool_choice`` and
    ``parallel_tool_calls`` only with ``tools`` (the API refuses them on a request without
    tools); ``extra_body`` last, over the rest. The keys in :data:`IGNORED_SETTINGS` are left
    out, ``timeout`` is the client's own, and any other key is a ConfigError naming it.
    """
    check_settings(settings, _HANDLED | IGNORED_SETTINGS)
    body: dict[str, Any] = {key: settings[key] for key in _SAME_NAME if key in settings}  # type: ignore[literal-required]
    if "stop" in body:
        body["stop"] = list(body["stop"])
    if "max_tokens" in settings:
        body[max_tokens_field] = settings["max_tokens"]
    if tools and "tool_choice" in settings:
        choice = settings["tool_choice"]
        body["tool_choice"] = (
            choice
            if choice in _TOOL_CHOICES
            else {"type": "function", "function": {"name": choice}}
        )
    if tools and "parallel_tool_calls" in settings:
        body["parallel_tool_calls"] = settings["parallel_tool_calls"]
    body.update(settings.get("extra_body") or {})
    return body
