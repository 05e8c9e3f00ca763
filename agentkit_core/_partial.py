r"""One incremental, tolerant JSON parser, shared by every schema flavour.

:class:`PartialJSONParser` is fed a document chunk by chunk and keeps its tokenizer state
between chunks, so each character is looked at once: the total cost of a stream is linear in
its length. The value tree is kept live and mutated in place as tokens complete, so
:meth:`~PartialJSONParser.current` is cheap at any point.

What a cut document shows (the contract every flavour's ``partial_parse`` inherits):

- an object or array that has opened is present, holding what has completed inside it;
- a string cut anywhere (inside an escape or a ``\\u`` sequence too) is its prefix so far,
  without the incomplete escape;
- a key cut mid-way, a key whose colon or value has not arrived, a number not yet followed by
  a delimiter (``12`` may still become ``123``) and a literal cut mid-way (``tru``) are absent;
- a cut number that no continuation can make valid (``01``, ``1.e``, ``-.5``) raises at once,
  as a complete one would;
- nothing is shown before the root value starts (``current()`` is ``None``).
"""

from __future__ import annotations

import re
from typing import Any
from typing import Final
from typing import NoReturn

from ._errors import ParseError

_WS: Final = re.compile(r"[ \t\n\r]+")
_STRING_RUN: Final = re.compile(r'[^"\\]+')
_NUMBER_EXTENT: Final = re.compile(r"[-+0-9.eE]+")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
# What a number cut by the end of a chunk may be: the start of some JSON number ("1.", "1e+").
_NUMBER_PREFIX: Final = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:(?:\.[0-9]+)?[eE][-+]?[0-9]*|\.[0-9]*)?)?"
)
_HEX4: Final = re.compile(r"[0-9a-fA-F]{4}")
_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_LITERALS: Final[dict[str, tuple[str, Any]]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}

# What the parser expects next, outside a string.
_VALUE: Final = 0  # a value (after ':' or ',' in an array, or at the root)
_VALUE_OR_END: Final = 1  # after '['
_KEY: Final = 2  # after ',' in an object
_KEY_OR_END: Final = 3  # after '{'
_COLON: Final = 4
_COMMA_OR_END: Final = 5
_DONE: Final = 6
_START: Final = 7  # before the root, skipping prose up to the first '{' or '['

_OPENERS: Final = frozenset("{[")
_ROOT_OPENER: Final = re.compile(r"[{\[]")


class PartialJSONParser:
    """An incremental JSON parser whose partial value is readable after every chunk.

    ``feed(chunk)`` consumes more text; ``current()`` returns the value so far (the live
    tree: it is mutated in place by later chunks, so copy it to keep a snapshot);
    ``finish()`` checks the document is complete and returns the value. Malformed JSON
    raises :class:`~agentkit_core.plugin.ParseError` naming the offset. With ``skip_prose=True``
    anything before the first ``{`` or ``[`` (a code fence, "Here is the JSON:") is
    skipped; whatever follows the root value is always ignored.
    """

    __slots__ = (
        "_expect",
        "_is_key",
        "_key",
        "_keys",
        "_offset",
        "_pending",
        "_pieces",
        "_placed",
        "_root",
        "_stack",
        "_started",
    )

    def __init__(self, *, skip_prose: bool = False) -> None:
        self._stack: list[Any] = []  # the open containers, root first
        self._keys: list[str | None] = []  # per open container: its current key
        self._key: str | None = None
        self._expect = _START if skip_prose else _VALUE
        self._root: Any = None
        self._started = False
        self._pending = ""  # an incomplete token carried to the next chunk
        self._pieces: list[str] | None = None  # the open string's text, when in one
        self._is_key = False
        self._placed = False  # whether the open value string already has a slot in the tree
        self._offset = 0

    @property
    def done(self) -> bool:
        """Whether the root value is complete."""
        return self._expect == _DONE

    def is_open(self, container: Any) -> bool:
        """Whether ``container`` (a dict or list of the tree) may still grow."""
        return any(c is container for c in self._stack)

    def feed(self, chunk: str) -> Any:
        """Consume ``chunk`` and return :meth:`current`."""
        text = self._pending + chunk if self._pending else chunk
        self._pending = ""
        pos = 0
        end = len(text)
        stack = self._stack
        while pos < end:
            if self._pieces is not None:
                pos = self._scan_string(text, pos, end)
                continue
            expect = self._expect
            c = text[pos]
            if c in " \t\n\r":
                m = _WS.match(text, pos)
                assert m is not None
                pos = m.end()
            elif expect == _DONE:
                break
            elif expect == _START:
                m = _ROOT_OPENER.search(text, pos)
                if m is None:
                    pos = end
                else:
                    pos = m.start()
                    self._expect = _VALUE
            elif c == '"':
                if expect == _KEY or expect == _KEY_OR_END:
                    self._is_key = True
                elif expect <= _VALUE_OR_END:
                    self._is_key = False
                    self._placed = False
                else:
                    self._fail(text, pos)
                self._pieces = []
                pos += 1
            elif c == ",":
                if expect != _COMMA_OR_END:
                    self._fail(text, pos)
                self._expect = _KEY if type(stack[-1]) is dict else _VALUE
                pos += 1
            elif c == ":":
                if expect != _COLON:
                    self._fail(text, pos)
                self._expect = _VALUE
                pos += 1
            elif c in _OPENERS:
                if expect > _VALUE_OR_END:
                    self._fail(text, pos)
                self._open(c)
                pos += 1
            elif c == "}" or c == "]":
                self._close(text, pos, expect)
                pos += 1
            elif expect > _VALUE_OR_END:
                self._fail(text, pos)
            else:
                pos = self._scalar(text, pos)
                if self._pending:  # a number or literal the next chunk may go on with
                    break
        self._offset += len(text) - len(self._pending)
        return self.current()

    def _open(self, c: str) -> None:
        """Open a container (``c`` is ``{`` or ``[``) in the value's place."""
        container: Any = {} if c == "{" else []
        self._place(container)
        self._keys.append(self._key)
        self._key = None
        self._stack.append(container)
        self._expect = _KEY_OR_END if c == "{" else _VALUE_OR_END

    def _close(self, text: str, pos: int, expect: int) -> None:
        """Close the open container at ``text[pos]`` (``}`` or ``]``), which must match it."""
        stack = self._stack
        top = stack[-1] if stack else None
        if text[pos] == "}":
            ok = type(top) is dict and (expect == _KEY_OR_END or expect == _COMMA_OR_END)
        else:
            ok = type(top) is list and (expect == _VALUE_OR_END or expect == _COMMA_OR_END)
        if not ok:
            self._fail(text, pos)
        stack.pop()
        self._key = self._keys.pop()
        self._expect = _COMMA_OR_END if stack else _DONE

    def _scalar(self, text: str, pos: int) -> int:
        """Place the number or literal at ``pos``; returns where it ends.

        One the text ends inside of (it may go on in the next chunk) is kept in ``_pending``
        instead, and ``pos`` returned.
        """
        c = text[pos]
        if c == "-" or "0" <= c <= "9":
            m = _NUMBER_EXTENT.match(text, pos)
            assert m is not None
            if m.end() == len(text):  # may go on in the next chunk, if it can still be a number
                if _NUMBER_PREFIX.fullmatch(m.group()) is None:
                    self._not_a_number(m.group(), pos)
                self._pending = text[pos:]
                return pos
            self._place(self._number(m.group(), pos))
            return m.end()
        if c in _LITERALS:
            word, value = _LITERALS[c]
            if text.startswith(word, pos):
                self._place(value)
                return pos + len(word)
            if word.startswith(text[pos:]):
                self._pending = text[pos:]
                return pos
        self._fail(text, pos)

    def current(self) -> Any:
        """The value so far (``None`` before the root starts); see the module docstring."""
        pieces = self._pieces
        if pieces is not None and not self._is_key:
            text = "".join(pieces) if len(pieces) != 1 else pieces[0]
            pieces[:] = [text]
            self._put_string(text)
        return self._root

    def finish(self) -> Any:
        """The complete value; a document cut short raises :class:`ParseError`."""
        if self._pending and not self._stack and self._pieces is None:
            m = _NUMBER_EXTENT.fullmatch(self._pending)
            if m is not None:  # a bare root number ends with the document
                self._place(self._number(self._pending, 0))
                self._pending = ""
        if self._expect != _DONE or self._pieces is not None or self._pending:
            raise ParseError(
                f"JSON document ends early at offset {self._offset + len(self._pending)}: "
                f"{self._missing()} (was the answer cut off?)",
                errors=[f"(root): incomplete JSON, {self._missing()}"],
            )
        return self._root

    # ------------------------------------------------------------------ internals

    def _scan_string(self, text: str, pos: int, end: int) -> int:
        pieces = self._pieces
        assert pieces is not None
        m = _STRING_RUN.match(text, pos)
        if m is not None:
            pieces.append(m.group())
            pos = m.end()
            if pos == end:
                return pos
        if text[pos] == '"':
            value = "".join(pieces)
            self._pieces = None
            if self._is_key:
                self._key = value
                self._expect = _COLON
            else:
                self._put_string(value)
                self._expect = _COMMA_OR_END if self._stack else _DONE
            return pos + 1
        # a backslash: an escape, maybe cut by the chunk boundary
        if pos + 1 >= end:
            self._pending = text[pos:]
            return end
        esc = text[pos + 1]
        if esc != "u":
            if esc not in _ESCAPES:
                self._fail(text, pos + 1)
            pieces.append(_ESCAPES[esc])
            return pos + 2
        if pos + 6 > end:
            self._carry(text, pos, end)
            return end
        code = self._hex(text, pos + 2)
        if 0xD800 <= code <= 0xDBFF:  # a high surrogate: join it with the low one after it
            rest = text[pos + 6 : pos + 12]
            if len(rest) < 6 and "\\u".startswith(rest[:2]) and _HEX4.match(rest[2:] + "0000"):
                self._carry(text, pos, end)
                return end
            if rest[:2] == "\\u" and _HEX4.fullmatch(rest[2:]):
                low = int(rest[2:], 16)
                if 0xDC00 <= low <= 0xDFFF:
                    pieces.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                    return pos + 12
        pieces.append(chr(code))
        return pos + 6

    def _carry(self, text: str, pos: int, end: int) -> None:
        tail = text[pos:end]
        if not _HEX4.match(tail[2:6] + "0000"):
            self._fail(text, pos + 2)
        self._pending = tail

    def _hex(self, text: str, pos: int) -> int:
        if not _HEX4.match(text, pos):
            self._fail(text, pos)
        return int(text[pos : pos + 4], 16)

    def _number(self, lexeme: str, pos: int) -> int | float:
        m = _NUMBER.fullmatch(lexeme)
        if m is None:
            self._not_a_number(lexeme, pos)
        return float(lexeme) if m.group(1) or m.group(2) else int(lexeme)

    def _not_a_number(self, lexeme: str, pos: int) -> NoReturn:
        raise ParseError(
            f"invalid JSON at offset {self._offset + pos}: {lexeme!r} is not a number",
            errors=[f"(root): {lexeme!r} is not a JSON number"],
        )

    def _place(self, value: Any) -> None:
        stack = self._stack
        if not stack:
            self._root = value
            self._started = True
            self._expect = _DONE
            return
        top = stack[-1]
        if type(top) is dict:
            assert self._key is not None
            top[self._key] = value
        else:
            top.append(value)
        self._expect = _COMMA_OR_END

    def _put_string(self, text: str) -> None:
        stack = self._stack
        if not stack:
            self._root = text
            self._started = True
        elif type(stack[-1]) is dict:
            assert self._key is not None
            stack[-1][self._key] = text
        elif self._placed:
            stack[-1][-1] = text
        else:
            stack[-1].append(text)
        self._placed = True

    def _missing(self) -> str:
        if self._pieces is not None:
            return "inside a string"
        if self._expect == _START or (not self._started and not self._stack):
            return "no JSON value started"
        return f"{len(self._stack)} unclosed bracket(s)" if self._stack else "a cut value"

    def _fail(self, text: str, pos: int) -> NoReturn:
        got = text[pos : pos + 20]
        raise ParseError(
            f"invalid JSON at offset {self._offset + pos}: unexpected {got!r}",
            raw=text,
            errors=[f"(root): invalid JSON at offset {self._offset + pos} near {got!r}"],
        )


def partial_json(buffer: str, *, skip_prose: bool = False) -> Any:
    """The partial value of a (possibly cut) JSON document: one parser fed once."""
    parser = PartialJSONParser(skip_prose=skip_prose)
    parser.feed(buffer)
    return parser.current()
