r"""A tool call's streamed JSON respelled as it arrives, the way its final arguments spell it.

A call's final ``arguments`` are ``json.dumps(input, ensure_ascii=False)`` whether the answer
came whole or streamed (:func:`~agentkit_model_anthropic._wire.arguments_text`), but the
``partial_json`` fragments are the JSON as the model wrote it: its spacing, its escapes, its
numbers (``1.50``, ``1e3``). :class:`Respeller` writes each fragment in the final spelling at
once, holding back only what is not whole yet (a number until it ends, an escape, a high
surrogate until its low one), so the fragments a stream tells join to the final arguments.
"""

from __future__ import annotations

import json

#: The characters of a string that ``json.dumps(..., ensure_ascii=False)`` escapes.
_ESCAPED = {c: json.dumps(c)[1:-1] for c in '"\\\n\r\t\b\f'}
#: A JSON escape's character, for the escapes other than ``\u``.
_UNESCAPED = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_NUMBER_CHARS = frozenset("+-0123456789.eE")
_SEPARATORS = {",": ", ", ":": ": ", " ": "", "\t": "", "\n": "", "\r": ""}

_OUT, _STRING, _ESCAPE, _NUMBER, _DONE = range(5)


def _spell(char: str) -> str:
    """One character of a string as ``json.dumps(..., ensure_ascii=False)`` writes it."""
    escaped = _ESCAPED.get(char)
    if escaped is not None:
        return escaped
    return f"\\u{ord(char):04x}" if char < " " else char


class Respeller:
    """Feed it the fragments of one JSON document; each ``feed`` returns its respelled text.

    Malformed JSON is not its business (the call's parser rejects it): it respells what it can.
    """

    __slots__ = ("_depth", "_held", "_high", "_state")

    def __init__(self) -> None:
        self._state = _OUT
        self._depth = 0
        self._held = ""  # a number, or an escape after its backslash, not whole yet
        self._high = ""  # a high surrogate from a \u escape, waiting for its low one

    def feed(self, fragment: str) -> str:
        return "".join(map(self._char, fragment))

    def _char(self, char: str) -> str:
        state = self._state
        if state == _STRING:
            if char == "\\":
                self._state = _ESCAPE
                return ""
            if char == '"':
                self._state = _OUT
                return self._flush() + char
            return self._flush() + _spell(char)
        if state == _ESCAPE:
            return self._escape(char)
        if state == _NUMBER:
            if char in _NUMBER_CHARS:
                self._held += char
                return ""
            number, self._held, self._state = self._held, "", _OUT
            return json.dumps(json.loads(number)) + self._char(char)
        if state == _DONE:
            return ""  # what follows the document, as the parser ignores it
        return self._structure(char)

    def _structure(self, char: str) -> str:
        if char == '"':
            self._state = _STRING
        elif char in "-0123456789":
            self._state, self._held = _NUMBER, char
            return ""
        elif char in "{[":
            self._depth += 1
        elif char in "}]":
            self._depth -= 1
            self._state = _DONE if self._depth == 0 else _OUT
        return _SEPARATORS.get(char, char)

    def _escape(self, char: str) -> str:
        held = self._held + char
        if held[0] != "u":
            self._held, self._state = "", _STRING
            return self._flush() + _spell(_UNESCAPED.get(char, char))
        if len(held) < 5:
            self._held = held
            return ""
        self._held, self._state = "", _STRING
        code = int(held[1:], 16)
        if 0xDC00 <= code <= 0xDFFF and self._high:  # the pair is one character
            high, self._high = self._high, ""
            return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (code - 0xDC00))
        out = self._flush()
        if 0xD800 <= code <= 0xDBFF:
            self._high = chr(code)
            return out
        return out + _spell(chr(code))

    def _flush(self) -> str:
        high, self._high = self._high, ""
        return high
