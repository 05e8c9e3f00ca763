r"""What the command line writes to a terminal: text it shows, which the terminal never obeys.

A model's answer, a tool's result, a session's transcript or a memory entry can hold what a
terminal reads as a command: an escape sequence that sets the clipboard (OSC 52), rewrites the
window title, hides text or moves the cursor, a carriage return that overwrites a line, or a
bidirectional override that shows ``rm -rf /`` as something else in an approval's question.
Text from a web page a tool fetched can put them in the model's mouth. So while the command
line runs, what it writes to a terminal has every control character but the tab and the
newline, and the bidirectional controls, written out as escapes (``\x1b``, ``\u202e``).
Output to a file or a pipe is left exact, and ``--json`` escapes them anyway.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TextIO

#: The bidirectional controls, each with the escape it is shown as (``\u202e``): on a
#: terminal or the run viewer's page, an override would show ``exe.txt`` as ``txt.exe``, or
#: ``rm -rf /`` in an approval's question as something else.
BIDI_SHOWN = {
    code: f"\\u{code:04x}"
    for code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}

#: Each character a terminal may act on, and the escape it is shown as.
_SHOWN = {
    code: f"\\x{code:02x}"
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
    if chr(code) not in "\t\n"
}
_SHOWN.update(BIDI_SHOWN)


def shown(text: str) -> str:
    """``text`` with what a terminal would act on written out as escapes."""
    return text.translate(_SHOWN)


class _Shown:
    """A terminal's stream that writes :func:`shown` text; everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(shown(text))

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


@contextlib.contextmanager
def terminals_shown() -> Iterator[None]:
    """While it lasts, ``sys.stdout`` and ``sys.stderr`` that are terminals write shown text."""
    kept = sys.stdout, sys.stderr
    try:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if stream is not None and not isinstance(stream, _Shown) and stream.isatty():
                setattr(sys, name, _Shown(stream))
        yield
    finally:
        sys.stdout, sys.stderr = kept
