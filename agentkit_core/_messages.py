"""Messages, tool calls and usage: what every provider's wire format is converted to and from.

Messages are frozen: the prefix of a request must stay bit-identical across turns, and a
compactor or hook that wants a change builds a new message instead of editing one in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from json.scanner import make_scanner
from typing import Any
from typing import Literal

from ._records import quick_init

Role = Literal["system", "user", "assistant", "tool"]
#: Message content: plain text, or OpenAI-style content parts (``{"type": "text", ...}``,
#: ``{"type": "image_url", ...}``) for multimodal tool results and user turns.
Content = str | tuple[dict[str, Any], ...]

#: The scanner ``json.loads`` ends in (its default decoder's), called directly.
_scan = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # as JSONDecoder makes its own


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to call one tool. ``arguments`` is the raw JSON text the model sent."""

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON; raises ``json.JSONDecodeError`` on bad JSON."""
        text = self.arguments
        try:  # json.loads's own scanner, without its three Python layers (two thirds of its cost)
            value, end = _scan(text, 0)
        except StopIteration:  # not a JSON value at its first character: json.loads says why
            return json.loads(text) if text.strip() else {}
        return value if end == len(text) else json.loads(text)  # trailing space, or extra data


@quick_init
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


@quick_init
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
