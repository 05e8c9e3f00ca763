"""Messages, tool calls and usage, and their round trip to the OpenAI chat wire format.

Messages are frozen: the prefix of a request must stay bit-identical across turns, and a
compactor or hook that wants a change builds a new message instead of editing one in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Literal

from ._errors import ProviderResponseError

Role = Literal["system", "user", "assistant", "tool"]
#: Message content: plain text, or OpenAI-style content parts (``{"type": "text", ...}``,
#: ``{"type": "image_url", ...}``) for multimodal tool results and user turns.
Content = str | tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to call one tool. ``arguments`` is the raw JSON text the model sent."""

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON; raises ``json.JSONDecodeError`` on bad JSON."""
        return json.loads(self.arguments) if self.arguments.strip() else {}


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message: system, user, assistant (possibly with tool calls) or a tool result."""

    role: Role
    content: Content = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", text)

    @classmethod
    def user(cls, text: Content) -> Message:
        return cls("user", text)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: Iterable[ToolCall] = ()) -> Message:
        return cls("assistant", text, tuple(tool_calls))

    @classmethod
    def tool(
        cls, tool_call_id: str, content: Content, *, name: str | None = None, is_error: bool = False
    ) -> Message:
        return cls("tool", content, tool_call_id=tool_call_id, name=name, is_error=is_error)

    @property
    def text(self) -> str:
        """The text of the content, with the text of every text part joined."""
        if isinstance(self.content, str):
            return self.content
        return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")


@dataclass(frozen=True, slots=True)
class Usage:
    """Token and request counts; usages add up with ``+``."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
        )


def message_to_openai(message: Message) -> dict[str, Any]:
    """One message as an OpenAI Chat Completions ``messages[]`` entry."""
    content: Any = message.content if isinstance(message.content, str) else list(message.content)
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.role == "assistant" and message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
        if not content:
            out["content"] = None
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None and message.role in ("user", "system"):
        out["name"] = message.name
    return out


def message_from_openai(data: dict[str, Any]) -> Message:
    """Parse one OpenAI ``messages[]`` entry, or a response's ``choices[].message``."""
    try:
        role = data["role"]
        raw_content = data.get("content")
        content: Content = (
            raw_content
            if isinstance(raw_content, str)
            else tuple(raw_content)
            if isinstance(raw_content, list)
            else ""
        )
        calls = tuple(
            ToolCall(
                id=str(c.get("id") or f"call_{i}"),
                name=c["function"]["name"],
                arguments=c["function"].get("arguments") or "{}",
            )
            for i, c in enumerate(data.get("tool_calls") or ())
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ProviderResponseError(
            f"not an OpenAI chat message: {data!r:.200} (missing or malformed {exc})"
        ) from exc
    if role not in ("system", "user", "assistant", "tool", "developer"):
        raise ProviderResponseError(f"unknown message role {role!r} in {data!r:.200}")
    if role == "developer":
        role = "system"
    return Message(
        role=role,
        content=content,
        tool_calls=calls,
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name") if role in ("user", "system") else None,
    )


def messages_to_openai(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """A transcript as the OpenAI ``messages`` array."""
    return [message_to_openai(m) for m in messages]


def messages_from_openai(data: Iterable[dict[str, Any]]) -> list[Message]:
    """The OpenAI ``messages`` array as a transcript."""
    return [message_from_openai(d) for d in data]


def usage_from_openai(data: dict[str, Any] | None) -> Usage:
    """An OpenAI ``usage`` object (absent fields count as zero) as :class:`Usage`."""
    data = data or {}
    return Usage(
        int(data.get("prompt_tokens") or 0), int(data.get("completion_tokens") or 0), requests=1
    )
