"""The Responses API wire format: a transcript as ``input`` items and back, usage, settings.

A transcript goes as a flat list of items: system and user messages as ``{"role", "content"}``
(content parts as ``input_text``/``input_image``/``input_file``), an assistant turn as its
output items (``reasoning``, an assistant ``message``, ``function_call``s), a tool result as a
``function_call_output``.

Reasoning is kept **by value**: every request is sent with ``store: false`` and ``include:
["reasoning.encrypted_content"]``, and an answer's whole ``output`` (its reasoning items with
their encrypted content, the message and call items with their ids, in the API's order) rides
in ``Message.metadata["reasoning"] = {"model": <the model's name>, "output": [...]}``. The next
request sends those items back verbatim while the message still says what they say (its text,
its calls): the API then sees its own reasoning beside the calls it led to, with nothing kept
on OpenAI's side, so a checkpoint or a session resumed a week later (or on another account
with the same model) sends the same request. A message edited since keeps the reasoning and the
items that still match, and is written from its fields otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import ModelSettings
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.content import Part
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import token_count

from ._parts import part_to_responses
from ._wire import check_settings

#: ModelSettings keys the Responses API has no field for: left out of the body (a server that
#: reads one takes it through ``extra_body``).
RESPONSES_IGNORED_SETTINGS: frozenset[str] = frozenset(
    {"top_k", "stop", "seed", "presence_penalty", "frequency_penalty"}
)
_SAME_NAME = ("temperature", "top_p")
_HANDLED = frozenset(
    {
        "timeout",
        "max_tokens",
        "reasoning_effort",
        "tool_choice",
        "parallel_tool_calls",
        "extra_body",
        *_SAME_NAME,
        *RESPONSES_IGNORED_SETTINGS,
    }
)
_TOOL_CHOICES = ("auto", "none", "required")
#: Item types that belong to an assistant turn.
_ASSISTANT_ITEMS = frozenset({"reasoning", "function_call"})
_IMAGE_DETAIL = "auto"  # the API requires a detail; a part without one means this


# ---------------------------------------------------------------------- transcript to wire


def messages_to_responses(messages: Iterable[Message], *, model: str) -> list[dict[str, Any]]:
    """A transcript as the Responses API ``input`` items.

    ``model`` is the sending model's name: only reasoning it produced is sent back.
    """
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "assistant":
            items += _assistant_to_responses(message, model)
        elif message.role == "tool":
            output: Any = message.content
            if not isinstance(output, str):
                output = [_part_to_responses(part) for part in output]
            items.append(
                {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}
            )
        else:
            content: Any = message.content
            if not isinstance(content, str):
                content = [_part_to_responses(part) for part in content]
            items.append({"role": message.role, "content": content})
    return items


def _assistant_to_responses(message: Message, model: str) -> list[dict[str, Any]]:
    reasoning = message.metadata.get(REASONING)
    output = reasoning.get("output") if isinstance(reasoning, Mapping) else None
    if not (isinstance(output, list) and reasoning.get("model") == model):  # type: ignore[union-attr]
        output = []
    calls = list(message.tool_calls)
    texts = [item for item in output if item.get("type") == "message"]
    text_sent = bool(not message.text and not texts and calls)  # an answer of calls only
    items: list[dict[str, Any]] = []
    for item in output:
        kind = item.get("type")
        if kind == "function_call":
            key = (item.get("call_id"), item.get("name"), item.get("arguments"))
            same = next((c for c in calls if (c.id, c.name, c.arguments) == key), None)
            if same is not None:  # still in the message, unchanged
                calls.remove(same)
                items.append(item)
        elif kind == "message":
            if text_sent:
                continue
            if "".join(map(_output_text, texts)) == message.text:
                items += texts
            else:
                items.append({"role": "assistant", "content": message.text})
            text_sent = True
        else:  # reasoning, and whatever else the API returned in the turn
            items.append(item)
    if not text_sent:
        items.append({"role": "assistant", "content": message.text})
    items += [
        {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
        for c in calls
    ]
    return items


def _part_to_responses(part: dict[str, Any] | Part) -> dict[str, Any]:
    """A content part (typed, or the Chat Completions shapes) as a Responses input part."""
    if not isinstance(part, dict):
        return part_to_responses(part, _IMAGE_DETAIL)
    kind = part.get("type")
    if kind == "text":
        return {"type": "input_text", "text": part.get("text", "")}
    if kind == "image_url":
        image = part.get("image_url")
        image = image if isinstance(image, dict) else {"url": image}
        return {
            "type": "input_image",
            "image_url": image.get("url"),
            "detail": image.get("detail") or _IMAGE_DETAIL,
        }
    if kind == "file":
        return {"type": "input_file", **(part.get("file") or {})}
    if isinstance(kind, str) and kind.startswith("input_"):
        return part  # already in this API's shape
    raise ConfigError(
        f"a content part of type {kind!r} has no Responses API form; the parts it takes are "
        "text, image_url, file and the API's own input_* parts",
        value=part,
        source="Message.content",
    )


# ---------------------------------------------------------------------- wire to transcript


def messages_from_responses(items: Iterable[Any], *, model: str) -> list[Message]:
    """The Responses API ``input`` items as a transcript.

    The inverse of :func:`messages_to_responses` for every transcript it writes.
    Consecutive assistant-side items (reasoning, assistant messages, function calls) form one
    assistant message; a second text or a reasoning item after text or calls starts the next.
    ``model`` names who produced the reasoning found. Raises
    :class:`~agentkit_core.plugin.ProviderResponseError` naming a malformed item.
    """
    messages: list[Message] = []
    turn: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # call id -> function name, for the tool results
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _malformed(item, f"item {index} is not a JSON object")
        kind = item.get("type")
        if kind in _ASSISTANT_ITEMS or item.get("role") == "assistant":
            if turn and _starts_turn(item, turn):
                messages.append(message_from_output(turn, model=model))
                turn = []
            turn.append(item)
            if kind == "function_call":
                names[str(item.get("call_id"))] = str(item.get("name"))
            continue
        if turn:
            messages.append(message_from_output(turn, model=model))
            turn = []
        if kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise _malformed(item, f"item {index} has no call_id")
            output = item.get("output", "")
            content = output if isinstance(output, str) else _parts_from_responses(output)
            messages.append(Message.tool(call_id, content, name=names.get(call_id)))
        elif kind in (None, "message") and item.get("role") in ("system", "developer", "user"):
            content = item.get("content", "")
            if not isinstance(content, str):
                content = _parts_from_responses(content)
            if item["role"] == "user":
                messages.append(Message.user(content))
            else:
                messages.append(Message("system", content))
        else:
            raise _malformed(item, f"item {index} of type {kind!r} is not a message agentkit holds")
    if turn:
        messages.append(message_from_output(turn, model=model))
    return messages


def _starts_turn(item: dict[str, Any], turn: list[dict[str, Any]]) -> bool:
    """Whether ``item`` begins a new assistant turn after the items of ``turn``.

    A text does after a text or a call, reasoning after a text (reasoning between calls stays
    in their turn).
    """
    kind = item.get("type")
    if kind == "function_call":
        return False
    texts = any(t.get("type") not in _ASSISTANT_ITEMS for t in turn)
    return texts or (kind != "reasoning" and any(t.get("type") == "function_call" for t in turn))


def message_from_output(output: list[Any], *, model: str) -> Message:
    """An answer's ``output`` items as one assistant message.

    With reasoning among them, the whole output rides in ``metadata["reasoning"]``.
    """
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning = False
    for index, item in enumerate(output):
        if not isinstance(item, dict):
            raise _malformed(item, f"output[{index}] is not a JSON object")
        kind = item.get("type")
        if kind == "function_call":
            calls.append(_call(item, index))
        elif kind == "reasoning":
            reasoning = True
        elif kind == "message" or item.get("role") == "assistant":
            texts.append(_output_text(item))
    message = Message.assistant("".join(texts), calls)
    if reasoning:
        message.metadata[REASONING] = {"model": model, "output": list(output)}
    return message


def _call(item: dict[str, Any], index: int) -> ToolCall:
    fields: dict[str, str] = {}
    for key in ("call_id", "name", "arguments"):
        value = item.get(key)
        if not isinstance(value, str):
            what = "the arguments as JSON text" if key == "arguments" else "a string"
            raise _malformed(item, f"output[{index}].{key} is {value!r:.40}, expected {what}")
        fields[key] = value
    return ToolCall(fields["call_id"], fields["name"], fields["arguments"] or "{}")


def _output_text(item: dict[str, Any]) -> str:
    """The text of an assistant message item: its string, or its output_text/refusal parts."""
    content = item.get("content", "")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _malformed(item, "an assistant message's content is neither text nor a list")
    return "".join(
        str(part.get("text", part.get("refusal", "")))
        for part in content
        if isinstance(part, dict) and part.get("type") in ("output_text", "refusal", "input_text")
    )


def _parts_from_responses(parts: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise _malformed(parts, "content must be a string or a list of JSON objects")
    return tuple(_part_from_responses(part) for part in parts)


def _part_from_responses(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "input_text":
        return {"type": "text", "text": part.get("text", "")}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image = {"url": part["image_url"]}
        if part.get("detail", _IMAGE_DETAIL) != _IMAGE_DETAIL:
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    if kind == "input_file":
        return {"type": "file", "file": {k: v for k, v in part.items() if k != "type"}}
    return part


def _malformed(data: Any, why: str) -> ProviderResponseError:
    return ProviderResponseError(f"not a Responses API item ({why}): {data!r:.200}")


# ---------------------------------------------------------------------- usage and settings


def usage_from_responses(data: dict[str, Any] | None) -> Usage:
    """A Responses ``usage`` object as :class:`~agentkit_core.Usage` (absent counts are 0).

    ``input_tokens_details.cached_tokens`` is ``cache_read_tokens``,
    ``input_tokens_details.cache_write_tokens`` ``cache_write_tokens`` and
    ``output_tokens_details.reasoning_tokens`` ``reasoning_tokens``; the API counts each in
    ``input_tokens`` or ``output_tokens`` too, as :class:`~agentkit_core.Usage` does.
    """
    data = data if isinstance(data, dict) else {}
    inputs = data.get("input_tokens_details")
    outputs = data.get("output_tokens_details")
    return Usage(
        token_count(data, "input_tokens", "usage"),
        token_count(data, "output_tokens", "usage"),
        requests=1,
        cache_read_tokens=token_count(inputs, "cached_tokens", "usage.input_tokens_details"),
        cache_write_tokens=token_count(inputs, "cache_write_tokens", "usage.input_tokens_details"),
        reasoning_tokens=token_count(outputs, "reasoning_tokens", "usage.output_tokens_details"),
    )


def settings_to_responses(
    settings: ModelSettings, *, tools: bool, reasoning_summary: str | None = None
) -> dict[str, Any]:
    """The request body's fields for ``settings`` on the Responses API.

    ``temperature`` and ``top_p`` under their names, ``max_tokens`` as ``max_output_tokens``,
    ``reasoning_effort`` as ``reasoning.effort`` (with ``reasoning_summary`` as
    ``reasoning.summary``), ``tool_choice`` as is or a tool's name as ``{"type": "function",
    "name": ...}``, ``tool_choice``/``parallel_tool_calls`` only with ``tools``, ``extra_body``
    last. :data:`RESPONSES_IGNORED_SETTINGS` are left out; any other key is a ConfigError.
    """
    check_settings(settings, _HANDLED)
    body: dict[str, Any] = {key: settings[key] for key in _SAME_NAME if key in settings}  # type: ignore[literal-required]
    if "max_tokens" in settings:
        body["max_output_tokens"] = settings["max_tokens"]
    reasoning: dict[str, str] = {}
    if "reasoning_effort" in settings:
        reasoning["effort"] = settings["reasoning_effort"]
    if reasoning_summary is not None:
        reasoning["summary"] = reasoning_summary
    if reasoning:
        body["reasoning"] = reasoning
    if tools and "tool_choice" in settings:
        choice = settings["tool_choice"]
        body["tool_choice"] = (
            choice if choice in _TOOL_CHOICES else {"type": "function", "name": choice}
        )
    if tools and "parallel_tool_calls" in settings:
        body["parallel_tool_calls"] = settings["parallel_tool_calls"]
    body.update(settings.get("extra_body") or {})
    return body
