"""Messages, tool calls and usage: what every provider's wire format is converted to and from.

Messages are frozen: the prefix of a request must stay bit-identical across turns, and a
compactor or hook that wants a change builds a new message instead of editing one in place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import field
from itertools import islice
from json.scanner import make_scanner
from typing import Any
from typing import Literal
from typing import TypeAlias
from typing import TypeVar
from typing import overload

from ._content import Part
from ._content import content_text
from ._errors import ProviderResponseError
from ._records import quick_init
from ._records import record

#: A JSON value as ``json.loads`` returns it: wire bodies, checkpoint state, parsed arguments.
JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None
#: A JSON object.
JSONObject: TypeAlias = dict[str, JSONValue]

V = TypeVar("V")

Role = Literal["system", "user", "assistant", "tool"]
#: Message content: plain text, or content parts for multimodal tool results and user turns:
#: typed ones (:mod:`agentkit_core.content`) and OpenAI-style dicts (``{"type": "text", ...}``,
#: ``{"type": "image_url", ...}``).
Content = str | tuple[dict[str, Any] | Part, ...]


class DuplicateKeyError(json.JSONDecodeError):
    """Tool-call arguments that name one key twice in an object.

    JSON leaves such a text's meaning open: Python keeps the last value, other readers the
    first, so a policy could decide on one value while a server runs the other.
    """


class DuplicateKey(Exception):
    """A JSON object naming ``key`` twice, as :func:`unique_keys` found it."""

    def __init__(self, key: str) -> None:
        self.key = key


def unique_keys(pairs: list[tuple[str, V]]) -> dict[str, V]:
    """An ``object_pairs_hook`` for json that refuses an object naming a key twice."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return value


#: The scanner ``json.loads`` ends in, refusing a key twice in one object, called directly.
_scan = make_scanner(json.JSONDecoder(object_pairs_hook=unique_keys))  # type: ignore[arg-type]


@quick_init
@record(frozen=True, slots=True)
class ToolCall:
    """A model's request to call one tool. ``arguments`` is the raw JSON text the model sent."""

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON; raises ``json.JSONDecodeError`` on bad JSON.

        An object naming a key twice is bad JSON here (:class:`DuplicateKeyError`, whose
        ``msg`` names the key), so that what decides on the call and what runs it read one value.
        So is JSON nested past the decoder's depth or a number past Python's digit limit: a
        model's answer holding one is bad arguments to report to it, not a crash of the run.
        """
        text = self.arguments
        try:  # json.loads's own scanner, without its three Python layers (two thirds of its cost)
            try:
                value, end = _scan(text, 0)
            except StopIteration:  # not a JSON value at its first character: json.loads says why
                return _loads(text) if text.strip() else {}
            return value if end == len(text) else _loads(text)  # trailing space, or extra data
        except DuplicateKey as twice:
            raise _duplicate(text, twice.key) from None
        except RecursionError:
            raise json.JSONDecodeError("nested too deeply to decode", text, 0) from None
        except json.JSONDecodeError:
            raise
        except ValueError as exc:  # an integer past Python's digit limit
            raise json.JSONDecodeError(f"unreadable: {str(exc).split(';')[0]}", text, 0) from None


def _loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=unique_keys)


def _duplicate(text: str, key: str) -> DuplicateKeyError:
    """The error for ``key`` named twice: at its second spelling as a key when written plainly."""
    spellings = "|".join(re.escape(json.dumps(key, ensure_ascii=a)) for a in (False, True))
    keys = [m.start() for m in re.finditer(f"(?:{spellings})\\s*:", text)]
    return DuplicateKeyError(f"duplicate key {key!r}", text, keys[1] if len(keys) > 1 else 0)


@quick_init
@record(frozen=True, slots=True)
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
        content = self.content
        return content if isinstance(content, str) else content_text(content)


@quick_init
@record(frozen=True, slots=True)
class Usage:
    """Token and request counts; usages add up with ``+``.

    ``input_tokens`` counts every prompt token, those read from or written to a provider's
    prompt cache included; ``cache_read_tokens`` and ``cache_write_tokens`` say how many of
    them were. ``output_tokens`` counts every generated token, reasoning included;
    ``reasoning_tokens`` says how many of them were. A provider that does not report a count
    leaves it 0.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


def token_count(data: object, key: str, where: str) -> int:
    """``data[key]``, a usage count in a provider's answer, as a token count for :class:`Usage`.

    ``data`` is the JSON object holding the count and ``where`` its path in the answer
    (``usage``, ``usage.prompt_tokens_details``, ``usage_metadata``). An absent or null count
    is 0, and so is every count of a ``data`` that is absent, null or not an object. Anything
    else that is not a whole number of 0 or more (-5, 1.5, "7", true) raises
    :class:`~agentkit_core.plugin.ProviderResponseError` naming ``where.key`` and the value: a
    negative count from a broken or hostile server would lift a token or cost budget, a string
    would be read as a number the server never sent.
    """
    value = data.get(key) if isinstance(data, Mapping) else None
    if value is None:
        return 0
    if type(value) is not int or value < 0:  # not bool, which is an int to isinstance
        try:
            shown = f"{value!r:.80}"
        except (ValueError, RecursionError):  # an integer past str()'s digit limit, a deep list
            shown = f"<{type(value).__name__} too large to show>"
        raise ProviderResponseError(f"{where}.{key} is not a token count: {shown}")
    return value


class TranscriptView(Sequence[Message]):
    """The first ``len`` messages of a run's transcript, read in place: a request's messages.

    A request used to copy the transcript into a tuple every turn, which made a turn's cost
    grow with the run. The transcript is append-only while requests are made of it (a fold or
    a handoff makes a new list), so what a view shows never changes. It behaves as the tuple
    of those messages: equal to that tuple (and to a view of the same messages), hashed and
    pickled as it, sliced into tuples, added to tuples.
    """

    __slots__ = ("_items", "_n")

    def __init__(self, items: list[Message], n: int | None = None) -> None:
        self._items = items
        self._n = len(items) if n is None else n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if type(index) is int and 0 <= index < self._n:  # a guard's read: the most asked
            return self._items[index]
        if isinstance(index, slice):  # read by positions: a list slice's -1 is not "before 0"
            return tuple(map(self._items.__getitem__, range(*index.indices(self._n))))
        at = index + self._n if index < 0 else index
        if not 0 <= at < self._n:
            raise IndexError("tuple index out of range")
        return self._items[at]

    def __iter__(self) -> Iterator[Message]:
        return islice(self._items, self._n)

    def __reversed__(self) -> Iterator[Message]:
        return map(self._items.__getitem__, range(self._n - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TranscriptView):
            if other._items is self._items and other._n == self._n:
                return True
            return other._n == self._n and tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return len(other) == self._n and tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: tuple[Message, ...]) -> tuple[Message, ...]:
        return (*self, *other)

    def __radd__(self, other: tuple[Message, ...]) -> tuple[Message, ...]:
        return (*other, *self)

    def __reduce__(self) -> tuple[type[tuple[Message, ...]], tuple[tuple[Message, ...]]]:
        return tuple, (tuple(self),)

    def __repr__(self) -> str:
        return repr(tuple(self))

    def after(self, prefix: TranscriptView) -> list[Message] | None:
        """The messages past ``prefix`` when it is a view of the same list these extend, else None.

        What an estimate of each request adds to the last one's: a list slice, no message read.
        """
        if prefix._items is self._items and prefix._n <= self._n:
            return self._items[prefix._n : self._n]
        return None

    def extends(self, prefix: Sequence[Message]) -> bool:
        """Whether these begin with ``prefix`` (a view of the same list: no message is read)."""
        if isinstance(prefix, TranscriptView) and prefix._items is self._items:
            return prefix._n <= self._n
        n = len(prefix)
        return n <= self._n and tuple(islice(self._items, n)) == tuple(prefix)


def past(messages: Sequence[Message], prefix: Sequence[Message]) -> Sequence[Message] | None:
    """The messages of ``messages`` past ``prefix`` when they begin with it (see starts_with).

    None when they do not. Two views of one transcript compare their lengths and give a list
    slice: one call where a request checked against the last one asked two and a view's length.
    """
    if type(messages) is TranscriptView and type(prefix) is TranscriptView:
        items, n = messages._items, prefix._n
        if prefix._items is items:  # a list slice, not a view's
            return items[n : messages._n] if 0 < n <= messages._n else None
    return messages[len(prefix) :] if starts_with(messages, prefix) else None


def starts_with(messages: Sequence[Message], prefix: Sequence[Message]) -> bool:
    """Whether ``messages`` begins with the messages of ``prefix``, copying neither.

    Two views of one transcript (each request's, in a run) compare their lengths, before any
    indexed read. Tuple ordering walks both to the first position where they differ, comparing
    identical messages by address alone (no message is read, so a long prefix costs a pointer
    scan); messages define no order, so a difference raises TypeError.
    """
    if type(prefix) is TranscriptView and type(messages) is TranscriptView:
        if prefix._items is messages._items:
            return 0 < prefix._n <= messages._n
    n = len(prefix)
    if not n or len(messages) < n or messages[n - 1] is not prefix[-1]:
        return False
    if isinstance(messages, TranscriptView):
        return messages.extends(prefix)
    if type(messages) is not tuple or type(prefix) is not tuple:
        return False
    try:
        return prefix <= messages
    except TypeError:
        return False
