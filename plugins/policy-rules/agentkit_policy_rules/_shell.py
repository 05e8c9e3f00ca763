"""Reading a shell command line the way a prefix rule needs it: its simple commands, by words.

A prefix rule (``git status``) is about a command's leading words, and a command line can hold
several commands (``git status && rm -rf /``), so the line is split at the shell's control
operators first and each simple command, a :class:`Segment`, is decided on its own. Quotes,
escapes, comments, redirections and substitutions are read as the shell reads them, so a ``;``
inside quotes splits nothing and one inside ``$(...)`` is part of the substitution.

Each segment has two readings:

* **strict**, what an allow rule reads: the words as written, and only when the segment is
  *plain*: no redirection, no command or process substitution, no ``$`` expansion. An allow
  rule grants what it can read, nothing a redirection writes or an expansion becomes.
* **lenient**, what deny and ask rules read: leading variable assignments and reserved words
  are skipped, and after a wrapper (``sudo``, ``env``, ``nohup``, ``xargs``...) the prefix may
  start at any later word, so ``sudo -u bob git push`` is still ``git push``. A segment whose
  commands cannot be read, a substitution anywhere, a ``$`` in the command word, ``eval``,
  ``sh -c``, is *opaque*: a deny or ask rule cannot tell, and the call is asked about.

This reads words; it is not a sandbox. A program that runs others from its own arguments or
files (``make``, ``git -c alias.x=...``, a script) is not followed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Final

_BLANK: Final = " \t\r"
_OPERATORS: Final = ";&|()\n"
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"})
_EVALUATORS: Final = frozenset({"eval", "source", "."})
_RESERVED: Final = frozenset({"!", "{", "}", "if", "then", "else", "elif", "do", "while", "until"})
_WRAPPERS: Final = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "nohup",
        "nice",
        "ionice",
        "exec",
        "command",
        "builtin",
        "time",
        "timeout",
        "stdbuf",
        "setsid",
        "xargs",
        "chronic",
        "unbuffer",
    }
)
_NAME_START: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_NAME: Final = _NAME_START + "0123456789"
#: A line of words made only of characters the shell reads literally anywhere in a word (no
#: quote, escape, operator, redirection, expansion, glob, comment or tilde): its words are its
#: blank-separated parts, so it is split without the character-by-character reader.
_PLAIN_LINE: Final = re.compile(
    r"[ \t\r]*[\w./:,@%+=-]+(?:[ \t\r]+[\w./:,@%+=-]+)*[ \t\r]*", re.ASCII
)


@dataclass(frozen=True, slots=True)
class Segment:
    """One simple command of a command line, with what makes it hard to read."""

    words: tuple[str, ...]
    redirect: bool = False
    substitution: bool = False
    expansion: bool = False

    @property
    def plain(self) -> bool:
        """Whether an allow rule may read it: no redirection, substitution or expansion."""
        return not (self.redirect or self.substitution or self.expansion)

    def lenient(self) -> tuple[tuple[str, ...], bool, bool]:
        """``(words, wrapped, opaque)``: the command's words as a deny rule reads them.

        ``wrapped``: a wrapper ran it, so a prefix may start at any word. ``opaque``: what it
        runs cannot be read from its words.
        """
        words = list(self.words)
        while words and (words[0] in _RESERVED or _is_assignment(words[0])):
            words.pop(0)
        wrapped = False
        while words and _base(words[0]) in _WRAPPERS:
            words.pop(0)
            wrapped = True
            while words and _is_assignment(words[0]):
                words.pop(0)
        first = _base(words[0]) if words else ""
        opaque = (
            self.substitution
            or "$" in first
            or "`" in first
            or first in _EVALUATORS
            or (first in _SHELLS and any(w.startswith("-") and "c" in w for w in words[1:]))
        )
        if words:
            words[0] = first
        return tuple(words), wrapped, opaque


def _base(word: str) -> str:
    """A command word without its directory (``/usr/bin/git`` is ``git``)."""
    return os.path.basename(word) if "/" in word else word


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and bool(name) and name[0] in _NAME_START and all(c in _NAME for c in name)


def split_command(line: str) -> tuple[Segment, ...] | None:
    """The simple commands of ``line``, or None when it cannot be read (an unclosed quote)."""
    if _PLAIN_LINE.fullmatch(line):  # most commands: one segment of plain words
        return (Segment(tuple(line.split())),)
    return _Reader(line).read()


class _Reader:
    """One pass over a command line, character by character, as the shell tokenises it."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.i = 0
        self.segments: list[Segment] = []
        self.words: list[str] = []
        self.word: list[str] = []
        self.in_word = False
        self.redirect = self.substitution = self.expansion = False
        self.skip_target = False

    def read(self) -> tuple[Segment, ...] | None:
        line, n = self.line, len(self.line)
        while self.i < n:
            c = line[self.i]
            if c in _BLANK:
                self._end_word()
                self.i += 1
            elif c == "\\":
                escaped = line[self.i + 1 : self.i + 2]
                if escaped != "\n":  # a backslash-newline continues the line
                    self._add(escaped)
                self.i += 2
            elif c == "'":
                end = line.find("'", self.i + 1)
                if end < 0:
                    return None
                self._add(line[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                if not self._double_quoted():
                    return None
            elif c == "`" or c == "$":
                end = self._expansion(self.i)
                if end < 0:
                    return None
                self._add(line[self.i : end])
                self.i = end
            elif c == "#" and not self.in_word:
                end = line.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c in "<>" or (c == "&" and line[self.i + 1 : self.i + 2] == ">"):
                if not self._redirection():
                    return None
            elif c in _OPERATORS:
                self._end_segment()
                self.i += 1
            else:
                self._add(c)
                self.i += 1
        self._end_segment()
        return tuple(self.segments)

    def _add(self, text: str) -> None:
        self.word.append(text)
        self.in_word = True

    def _end_word(self) -> None:
        if self.in_word:
            if self.skip_target:
                self.skip_target = False
            else:
                self.words.append("".join(self.word))
        self.word.clear()
        self.in_word = False

    def _end_segment(self) -> None:
        self._end_word()
        if self.words or self.redirect or self.substitution:
            self.segments.append(
                Segment(tuple(self.words), self.redirect, self.substitution, self.expansion)
            )
        self.words = []
        self.redirect = self.substitution = self.expansion = False
        self.skip_target = False

    def _double_quoted(self) -> bool:
        line, n = self.line, len(self.line)
        j = self.i + 1
        parts: list[str] = []
        while j < n:
            c = line[j]
            if c == '"':
                self._add("".join(parts))
                self.i = j + 1
                return True
            if c == "\\" and line[j + 1 : j + 2] in ('"', "\\", "$", "`", "\n"):
                if line[j + 1] != "\n":
                    parts.append(line[j + 1])
                j += 2
            elif c == "`" or c == "$":
                end = self._expansion(j)
                if end < 0:
                    return False
                parts.append(line[j:end])
                j = end
            else:
                parts.append(c)
                j += 1
        return False

    def _expansion(self, j: int) -> int:
        """Where the ``$...`` or backquoted expansion at ``j`` ends (-1: it never closes)."""
        line = self.line
        if line[j] == "`":
            end = j + 1
            while end < len(line) and line[end] != "`":
                end += 2 if line[end] == "\\" else 1
            if end >= len(line):
                return -1
            self.substitution = True
            return end + 1
        after = line[j + 1 : j + 2]
        if after == "(":
            close = self._closing(j + 1)
            if close < 0:
                return -1
            self.substitution = True
            return close + 1
        if after == "{":
            close = line.find("}", j + 2)
            if close < 0:
                return -1
            self.expansion = True
            return close + 1
        if after and after in _NAME_START:
            end = j + 2
            while end < len(line) and line[end] in _NAME:
                end += 1
            self.expansion = True
            return end
        if after and after in "0123456789@*#?$!-":
            self.expansion = True
            return j + 2
        return j + 1  # a lone "$" is itself

    def _closing(self, open_at: int) -> int:
        """The index of the ``)`` matching the ``(`` at ``open_at``, skipping quoted text."""
        line, depth, k = self.line, 0, open_at
        while k < len(line):
            c = line[k]
            if c == "\\":
                k += 2
                continue
            if c == "'" or c == '"':
                k = line.find(c, k + 1)
                if k < 0:
                    return -1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return k
            k += 1
        return -1

    def _redirection(self) -> bool:
        line = self.line
        if self.in_word and "".join(self.word).isdigit():  # "2>": the digits name a descriptor
            self.word.clear()
            self.in_word = False
        else:
            self._end_word()
        self.redirect = True
        start = self.i
        while self.i < len(line) and line[self.i] in "<>&|" and self.i - start < 3:
            self.i += 1
        op = line[start : self.i]  # >, >>, 2>&, &>, <<, <<<, >|, <>
        if op in ("<", ">") and line[self.i : self.i + 1] == "(":  # process substitution
            close = self._closing(self.i)
            if close < 0:
                return False
            self.substitution = True
            self._add(line[start : close + 1])
            self.i = close + 1
            return True
        self.skip_target = True  # the next word is the file (or descriptor) redirected to
        return True
