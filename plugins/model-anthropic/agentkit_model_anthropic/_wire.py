"""The Messages API wire format: agentkit messages to and from Anthropic's, without loss.

What an agentkit :class:`~agentkit_core.Message` holds maps onto the Messages API like this:

- the transcript's leading system messages become the ``system`` text blocks (the API has no
  system role inside ``messages``); a system message later in the transcript is sent as a user
  turn's text, the only place the API takes it;
- a user message is a user turn (text, or content parts: Anthropic's own blocks go as they
  are, OpenAI-style ``image_url`` parts become ``image`` blocks);
- an assistant message is an assistant turn: its thinking blocks, its text, its ``tool_use``
  blocks (``input`` is the call's JSON arguments as an object);
- consecutive tool messages are one user turn of ``tool_result`` blocks, since the API wants
  every result of a parallel call in the turn right after it.

An answer's thinking and redacted-thinking blocks, with their signatures, ride in
``message.metadata["reasoning"]`` as ``{"model": <Model.name>, "blocks": [...], "at": [...]}``:
the blocks exactly as the API sent them and their places in the answer's content, so they are
sent back byte for byte, in place, as the API requires of an answer whose tool calls are being
answered (interleaved thinking included). The text blocks and their ``citations`` ride in
``message.metadata["anthropic"]`` while the message's text still says what they say.
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
from agentkit_core.plugin import REASONING
from agentkit_core.plugin import ProviderResponseError
from agentkit_core.plugin import token_count

from ._parts import part_to_block

#: The metadata key of what only this wire says about a message (its text blocks' shape).
WIRE = "anthropic"
#: Content block types that are the model's reasoning, sent back only to the model that wrote them.
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
#: Block types a user turn may carry as they are.
_USER_BLOCKS = frozenset({"text", "image", "document", "search_result", "container_upload"})


# ---------------------------------------------------------------------- agentkit -> wire


def system_to_anthropic(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], int]:
    """The ``system`` text blocks of the leading system messages, and how many there were."""
    blocks: list[dict[str, Any]] = []
    count = 0
    for message in messages:
        if message.role != "system":
            break
        count += 1
        blocks.extend(_parts_to_blocks(message.content, f"system message {count - 1}"))
    return blocks, count


def messages_to_anthropic(messages: Iterable[Message], *, model: str) -> list[dict[str, Any]]:
    """The ``messages`` array for ``messages`` (leading system messages already taken out).

    ``model`` is the Model.name of the caller: reasoning another model wrote is left out.
    """
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            block = _tool_result(message)
            if out and out[-1]["role"] == "user" and _all_results(out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif message.role == "assistant":
            out.append({"role": "assistant", "content": _assistant_blocks(message, model)})
        else:
            where = f"{message.role} message {index}"
            content: Any = message.content
            if not isinstance(content, str):
                content = _parts_to_blocks(content, where)
            out.append({"role": "user", "content": content})
    return out


def _all_results(content: Any) -> bool:
    return isinstance(content, list) and all(b.get("type") == "tool_result" for b in content)


def _tool_result(message: Message) -> dict[str, Any]:
    content: Any = message.content
    if not isinstance(content, str):
        content = _parts_to_blocks(content, f"the result of tool call {message.tool_call_id}")
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id or "",
        "content": content,
    }
    if message.is_error:
        block["is_error"] = True
    return block


def _parts_to_blocks(content: Any, where: str) -> list[dict[str, Any]]:
    """Content parts as Anthropic blocks: theirs as they are, others converted.

    OpenAI's images and typed parts (:func:`part_to_block`) are converted.
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks = []
    for part in content:
        if not isinstance(part, dict):
            blocks.append(part_to_block(part))
            continue
        kind = part.get("type")
        if kind in _USER_BLOCKS:
            blocks.append(copy.deepcopy(part))
        elif kind == "image_url":
            blocks.append(_image(part, where))
        else:
            raise ConfigError(
                f"{where} has a content part of type {kind!r}, which the Anthropic Messages "
                f"API does not take; use one of {', '.join(sorted(_USER_BLOCKS))} or image_url",
                value=part,
                source=where,
            )
    return blocks


def _image(part: dict[str, Any], where: str) -> dict[str, Any]:
    """An OpenAI ``image_url`` part (a data: URL or an http(s) URL) as an ``image`` block."""
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else image
    if not isinstance(url, str):
        raise ConfigError(f"{where}: an image_url part without a url: {part!r:.120}", value=part)
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        media_type = header[5:].split(";")[0]
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def _assistant_blocks(message: Message, model: str) -> list[dict[str, Any]]:
    """An assistant message's content blocks, its own model's reasoning put back in place."""
    residue = message.metadata.get(WIRE) or {}
    texts = residue.get("text")
    if isinstance(texts, list) and "".join(t.get("text", "") for t in texts) == message.text:
        blocks = copy.deepcopy(texts)
    else:
        blocks = [{"type": "text", "text": message.text}] if message.text else []
    blocks += [_tool_use(call) for call in message.tool_calls]
    reasoning = message.metadata.get(REASONING)
    if isinstance(reasoning, dict) and reasoning.get("model") == model:
        places = reasoning.get("at") or []
        for i, block in enumerate(reasoning.get("blocks") or ()):
            at = places[i] if i < len(places) else len(blocks)
            blocks.insert(min(at, len(blocks)), copy.deepcopy(block))
    return blocks


def _tool_use(call: ToolCall) -> dict[str, Any]:
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError as exc:
        arguments = exc
    if not isinstance(arguments, dict):
        raise ConfigError(
            f"tool call {call.id!r} ({call.name}) has arguments {call.arguments!r:.120}, which "
            "are not a JSON object; the Anthropic API takes a tool call's input only as an "
            "object: fix or drop the call before sending the transcript to this model",
            value=call.arguments,
            source=f"tool call {call.id}",
        )
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}


# ---------------------------------------------------------------------- wire -> agentkit


def message_from_anthropic(content: Any, *, model: str) -> Message:
    """An answer's (or a request's assistant turn's) content blocks as one assistant Message.

    Thinking blocks go into ``metadata["reasoning"]`` under ``model``; text blocks that a plain
    text block cannot say (several, or with citations) into ``metadata["anthropic"]``.
    """
    if not isinstance(content, list):
        raise ProviderResponseError(f"an answer's content must be an array, got {content!r:.200}")
    texts: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    thinking: list[dict[str, Any]] = []
    at: list[int] = []
    for index, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in THINKING_TYPES:
            thinking.append(block)
            at.append(index)
        elif kind == "text":
            if not isinstance(block.get("text"), str):
                raise ProviderResponseError(
                    f"content[{index}].text is not a string: {block!r:.200}"
                )
            texts.append(block)
        elif kind == "tool_use":
            call = tool_call_from_block(block, f"content[{index}]")
            if any(c.id == call.id for c in calls):  # results and decisions go by id
                raise ProviderResponseError(
                    f"content[{index}].id {call.id!r} repeats an earlier tool_use's id; each "
                    "call of an answer needs its own id"
                )
            calls.append(call)
        else:
            raise ProviderResponseError(
                f"content[{index}] is a block of type {kind!r}, which agentkit does not read "
                f"(text, tool_use, thinking, redacted_thinking): {block!r:.200}"
            )
    message = Message.assistant("".join(t["text"] for t in texts), calls)
    if len(texts) > 1 or any(set(t) - {"type", "text"} for t in texts):
        message.metadata[WIRE] = {"text": texts}
    if thinking:
        message.metadata[REASONING] = {"model": model, "blocks": thinking, "at": at}
    return message


def tool_call_from_block(block: dict[str, Any], where: str) -> ToolCall:
    """A ``tool_use`` block as a ToolCall (``input`` written as JSON text)."""
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input", {})
    if not isinstance(call_id, str) or not call_id:
        raise ProviderResponseError(f"{where}.id is not a non-empty string: {block!r:.200}")
    if not isinstance(name, str) or not name:
        raise ProviderResponseError(f"{where}.name is not a non-empty string: {block!r:.200}")
    if not isinstance(arguments, dict):
        raise ProviderResponseError(f"{where}.input is not an object: {block!r:.200}")
    return ToolCall(call_id, name, arguments_text(arguments))


def arguments_text(arguments: Any) -> str:
    """One spelling of a call's arguments for a whole answer and a streamed one alike."""
    return json.dumps(arguments, ensure_ascii=False)


def messages_from_anthropic(system: Any, messages: Iterable[Any], *, model: str) -> list[Message]:
    """A request's ``system`` and ``messages`` back as a transcript (the inverse of the above).

    ``system`` blocks become one system message each; a user turn of ``tool_result`` blocks
    becomes one tool message per result (named after its call, found in the turn before).
    """
    out: list[Message] = []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    for block in system or ():
        out.append(Message.system(_strip_cache(block)["text"]))
    names: dict[str, str] = {}
    for turn in messages:
        content = turn["content"]
        if turn["role"] == "assistant":
            message = message_from_anthropic([_strip_cache(b) for b in content], model=model)
            names.update((c.id, c.name) for c in message.tool_calls)
            out.append(message)
        elif isinstance(content, list) and content and _all_results(content):
            out.extend(_tool_message(_strip_cache(b), names) for b in content)
        elif isinstance(content, str):
            out.append(Message.user(content))
        else:
            out.append(Message.user(tuple(_strip_cache(b) for b in content)))
    return out


def _tool_message(block: dict[str, Any], names: dict[str, str]) -> Message:
    content = block.get("content", "")
    if isinstance(content, list):
        content = tuple(_strip_cache(b) for b in content)
    call_id = block["tool_use_id"]
    return Message.tool(
        call_id, content, name=names.get(call_id), is_error=bool(block.get("is_error"))
    )


def _strip_cache(block: dict[str, Any]) -> dict[str, Any]:
    """``block`` without the ``cache_control`` breakpoint a request put on it."""
    return {k: v for k, v in block.items() if k != "cache_control"}


# ---------------------------------------------------------------------- usage, stop reasons


def usage_from_anthropic(data: Any) -> Usage:
    """A ``usage`` object as :class:`~agentkit_core.Usage`.

    The API's ``input_tokens`` counts only the prompt tokens after the last cache breakpoint;
    agentkit's counts every prompt token, so it is ``input_tokens + cache_creation_input_tokens
    + cache_read_input_tokens``. ``reasoning_tokens`` is ``output_tokens_details.thinking_tokens``
    (already inside ``output_tokens``).
    """
    data = data if isinstance(data, dict) else {}
    read = token_count(data, "cache_read_input_tokens", "usage")
    written = token_count(data, "cache_creation_input_tokens", "usage")
    details = data.get("output_tokens_details")
    thinking = token_count(details, "thinking_tokens", "usage.output_tokens_details")
    return Usage(
        token_count(data, "input_tokens", "usage") + read + written,
        token_count(data, "output_tokens", "usage"),
        1,
        read,
        written,
        thinking,
    )


#: The API's stop reasons as agentkit's finish reasons (the names the core and the other
#: providers use); one it does not list goes through as it is.
STOP_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    "pause_turn": "pause_turn",
}


def finish_reason(stop_reason: Any) -> str | None:
    """The finish reason agentkit uses for the API's ``stop_reason``."""
    if stop_reason is None:
        return None
    return STOP_REASONS.get(str(stop_reason), str(stop_reason))


# ---------------------------------------------------------------------- settings

#: ModelSettings keys the Messages API has no field for: left out of the body (pass a field
#: of the API's own through ``extra_body``).
IGNORED_SETTINGS: frozenset[str] = frozenset({"seed", "presence_penalty", "frequency_penalty"})
_SAME_NAME = ("temperature", "top_p", "top_k")
_HANDLED = frozenset(
    {
        "timeout",
        "max_tokens",
        "stop",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning_effort",
        "extra_body",
        *_SAME_NAME,
    }
)
#: ``reasoning_effort`` as ``output_config.effort`` (``"none"`` turns thinking off instead).
EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh"}


def settings_to_anthropic(settings: ModelSettings, *, tools: bool) -> dict[str, Any]:
    """The request body's fields for ``settings`` (``max_tokens`` is the model's to fill).

    ``stop`` goes as ``stop_sequences``; ``tool_choice`` as ``{"type": "auto" | "any" |
    "none"}`` (``"required"`` is ``"any"``) or a tool's name as ``{"type": "tool", "name"}``;
    ``parallel_tool_calls=False`` as ``disable_parallel_tool_use`` on it; both only with
    ``tools``. ``reasoning_effort`` goes as ``output_config.effort`` (``"minimal"`` as
    ``"low"``), and ``"none"`` as ``thinking: {"type": "disabled"}``. ``extra_body`` last.
    """
    unknown = sorted(set(settings) - _HANDLED - IGNORED_SETTINGS)
    if unknown:
        raise ConfigError(
            f"ModelRequest.settings has {', '.join(map(repr, unknown))}, which is not a "
            "ModelSettings key; put a field of the Messages API in settings['extra_body']",
            value=unknown,
            source="ModelRequest.settings",
        )
    body: dict[str, Any] = {key: settings[key] for key in _SAME_NAME if key in settings}  # type: ignore[literal-required]
    if "stop" in settings:
        body["stop_sequences"] = list(settings["stop"])
    if tools:
        choice = _tool_choice(settings)
        if choice is not None:
            body["tool_choice"] = choice
    effort = settings.get("reasoning_effort")
    if effort == "none":
        body["thinking"] = {"type": "disabled"}
    elif effort is not None:
        body["output_config"] = {"effort": EFFORTS[effort]}
    body.update(settings.get("extra_body") or {})
    return body


def _tool_choice(settings: ModelSettings) -> dict[str, Any] | None:
    choice = settings.get("tool_choice")
    parallel = settings.get("parallel_tool_calls")
    if choice is None and parallel is not False:
        return None
    if choice is None or choice == "auto":
        out: dict[str, Any] = {"type": "auto"}
    elif choice == "required":
        out = {"type": "any"}
    elif choice == "none":
        return {"type": "none"}
    else:
        out = {"type": "tool", "name": choice}
    if parallel is False:
        out["disable_parallel_tool_use"] = True
    return out
