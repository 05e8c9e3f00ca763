"""Reading a shell command line the way a prefix rule needs it: its simple commands, by words.

A prefix rule (``git status``) is about a command's leading words, and a command line can hold
several commands (``git status && rm -rf /``), so the line is split at the shell's control
operators first and each simple command, a :class:`Segment`, is decided on its own. Quotes,
escapes, comments, redirections and substitutions are read as the shell reads them, so a ``;``
inside quotes splits nothing and one inside ``$(...)`` is part of the substitution.

A word the shell may turn into other words is *unresolved*: a glob (``pus[h]``, ``g*t``), a
brace expansion, a ``$`` expansion or substitution, ANSI-C or locale quoting (``$'push'``), a
pattern group (``@(push)``). Its :class:`Glob` says what it may become: words each matching a
pattern, or (with nothing to go on) any words at all, zero or more.

Each segment has two readings:

* **strict**, what an allow rule reads: the words as written, and only when the segment is
  *plain*: no redirection, no command or process substitution, no ``$`` expansion, and the
  words the rule compares resolved. An allow rule grants what it can read, nothing a
  redirection writes or an expansion becomes.
* **lenient** (:class:`Lenient`), what deny and ask rules read: leading variable assignments
  and reserved words are skipped; the command is compared by its name (``/usr/bin/git`` is
  ``git``); after a wrapper (``sudo``, ``env``, ``nohup``, ``xargs``...) the prefix may start at
  any word, so ``sudo -u bob git push`` is still ``git push``; an unresolved word matches every
  word it may become. A segment whose command cannot be read, a substitution anywhere, an
  unresolved command word, ``eval``, ``sh -c``, a shell reading its input, is *opaque*: a deny
  or ask rule that does not match cannot tell, and the call is asked about.

This reads words; it is not a sandbox. A program that runs others from its own arguments or
files (``make``, ``git -c alias.x=...``, ``python -c``, a script) is not followed.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

_BLANK: Final = " \t\r"
_OPERATORS: Final = ";&|()\n"
#: Programs that run a shell command line from a ``-c`` argument (or, for a shell with no
#: file to run, from their input).
_SHELLS: Final = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox"}
    | {"su", "runuser", "flock", "script"}
)
#: Shell builtins that run their arguments as shell code, and the keywords and builtins that
#: may run a builtin (a program such as ``sudo`` cannot).
_EVALUATORS: Final = frozenset({"eval", "source", "."})
_BUILTIN_RUNNERS: Final = frozenset({"command", "builtin", "time", "coproc"})
_RESERVED: Final = frozenset({"!", "{", "}", "if", "then", "else", "elif", "do", "while", "until"})
#: Programs (and keywords) that run the command their later words name.
_WRAPPERS: Final = frozenset(
    {
        "sudo",
        "doas",
        "pkexec",
        "runuser",
        "env",
        "nohup",
        "nice",
        "ionice",
        "chrt",
        "taskset",
        "numactl",
        "prlimit",
        "setpriv",
        "unshare",
        "nsenter",
        "chroot",
        "exec",
        "command",
        "builtin",
        "coproc",
        "time",
        "timeout",
        "stdbuf",
        "setsid",
        "flock",
        "watch",
        "xargs",
        "find",
        "strace",
        "ltrace",
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
#: The unquoted characters that may make a word a glob or a brace expansion.
_GLOBBY: Final = frozenset("*?[{")
#: Case-blind, since ``nocaseglob`` makes the shell's globs so.
_FLAGS: Final = re.IGNORECASE | re.DOTALL


@dataclass(frozen=True, slots=True)
class Glob:
    """What an unresolved word may become: zero or more words, each matching ``whole``.

    ``base`` is what the last path component of each may be, for the word as a command name.
    A word with nothing to go on (``$X``, ``{a,b}``) matches ``.*``: any words at all.
    """

    whole: re.Pattern[str]
    base: re.Pattern[str]


_ANY: Final = Glob(re.compile(".*", _FLAGS), re.compile(".*", _FLAGS))


@dataclass(frozen=True, slots=True)
class Segment:
    """One simple command of a command line, with what makes it hard to read.

    ``globs`` holds each word's :class:`Glob` (None for a word that is one literal), or is
    empty when every word is.
    """

    words: tuple[str, ...]
    redirect: bool = False
    substitution: bool = False
    expansion: bool = False
    globs: tuple[Glob | None, ...] = ()

    @property
    def plain(self) -> bool:
        """Whether an allow rule may read it: no redirection, substitution or expansion."""
        return not (self.redirect or self.substitution or self.expansion)

    def starts_with(self, prefix: Sequence[str]) -> bool:
        """The strict reading: whether the words begin with ``prefix``, each one a literal."""
        n = len(prefix)
        return self.plain and tuple(self.words[:n]) == tuple(prefix) and not any(self.globs[:n])

    def lenient(self) -> Lenient:
        """The segment as a deny or ask rule reads it."""
        words = list(self.words)
        globs = list(self.globs) or [None] * len(words)
        while words and ((globs[0] is None and words[0] in _RESERVED) or _is_assignment(words[0])):
            del words[0], globs[0]
        unresolved = bool(globs) and globs[0] is not None
        wrapped = unresolved or (bool(words) and _base(words[0]) in _WRAPPERS)
        commands = range(len(words)) if wrapped else range(min(1, len(words)))
        opaque = self.substitution or unresolved or any(_runs_code(words, i) for i in commands)
        return Lenient(tuple(words), tuple(globs), wrapped, opaque)


@dataclass(frozen=True, slots=True)
class Lenient:
    """A segment's words as deny and ask rules read them.

    ``wrapped``: a wrapper (or a word that may be one) runs the command, so a prefix may start
    at any word. ``opaque``: what it runs cannot be read from its words.
    """

    words: tuple[str, ...]
    globs: tuple[Glob | None, ...]
    wrapped: bool
    opaque: bool

    def begins(self, prefix: Sequence[str]) -> bool:
        """Whether the command may begin with ``prefix`` (at any word, when wrapped).

        Dynamic programming from the last word back: ``ahead[i]`` says whether the words after
        the current one may begin with ``prefix[i:]``. A literal word must equal its prefix
        word; an unresolved one may vanish, or become one or more words matching its glob.
        The prefix's first word is a command name, compared by its last path component.
        """
        k = len(prefix)
        if not k:
            return True
        want = [_base(prefix[0]), *prefix[1:]]
        words, globs = self.words, self.globs
        if not any(globs):  # every word a literal: compare at each start
            starts = range(len(words) - k + 1) if self.wrapped else range(min(1, len(words)))
            tail = list(prefix[1:])
            return any(
                _base(words[s]) == want[0] and list(words[s + 1 : s + k]) == tail for s in starts
            )
        ahead = [False] * k + [True]
        for j in range(len(words) - 1, -1, -1):
            here = [False] * k + [True]
            glob = globs[j]
            for i in range(k - 1, -1, -1):
                if glob is None:
                    word = _base(words[j]) if i == 0 else words[j]
                    here[i] = word == want[i] and ahead[i + 1]
                else:
                    pattern = glob.base if i == 0 else glob.whole
                    here[i] = ahead[i] or (
                        pattern.fullmatch(want[i]) is not None and (ahead[i + 1] or here[i + 1])
                    )
            if here[0] and (self.wrapped or j == 0):
                return True
            ahead = here
        return False


def _runs_code(words: Sequence[str], i: int) -> bool:
    """Whether the command at ``words[i]`` runs shell code its words do not show."""
    name = _base(words[i])
    if name in _EVALUATORS:
        return all(w in _BUILTIN_RUNNERS or w.startswith("-") for w in words[:i])
    if name == "watch":  # runs its words joined, through sh -c
        return True
    if name == "env":  # env -S 'git push' splits its string into the command's words
        return any(w.startswith("--split-string") or _short(w, "S") for w in words[i + 1 :])
    if name not in _SHELLS:
        return False
    rest = words[i + 1 :]
    code = any(_short(w, "c") for w in rest)
    return code or all(w.startswith("-") for w in rest)  # no file: it reads its input


def _short(word: str, letter: str) -> bool:
    """Whether ``word`` is a group of short options holding ``letter`` (``-lc`` holds ``c``)."""
    return word.startswith("-") and not word.startswith("--") and letter in word


def _base(word: str) -> str:
    """A command word by its name: ``/usr/bin/git`` and zsh's ``=git`` (git's path) are git."""
    name = os.path.basename(word) if "/" in word else word
    return name[1:] if name.startswith("=") else name


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and bool(name) and name[0] in _NAME_START and all(c in _NAME for c in name)


@functools.lru_cache(maxsize=1024)
def _glob(pieces: tuple[tuple[str, bool], ...]) -> Glob | None:
    """What a word of ``(text, quoted)`` pieces may become, or None when it is one literal.

    Unquoted ``*``, ``?`` and bracket expressions are globs; an unquoted brace with a comma
    or ``..`` is a brace expansion, which may become anything. (Cached: a policy decides the
    same commands again, on resume and in ``would``.)
    """
    plain = "".join(t for t, quoted in pieces if not quoted)
    chars = [(c, quoted) for text, quoted in pieces for c in text]
    word = "".join(c for c, _ in chars)
    if "{" in plain and ("," in word or ".." in word):
        return _ANY
    whole = _pattern(chars)
    if whole is None:
        return None
    cut = word.rfind("/") + 1
    base = _pattern(chars[cut:]) or re.escape(word[cut:])
    return Glob(re.compile(whole, _FLAGS), re.compile(base, _FLAGS))


def _pattern(chars: Sequence[tuple[str, bool]]) -> str | None:
    """A regular expression for what the glob ``chars`` matches, or None if it has no glob.

    It may match more than the shell's: a bracket expression becomes ``.*`` up to the last
    unquoted ``]`` of the word, whatever classes or negations it holds.
    """
    closes = [k for k, (c, quoted) in enumerate(chars) if c == "]" and not quoted]
    out: list[str] = []
    glob = False
    k = 0
    while k < len(chars):
        c, quoted = chars[k]
        if not quoted and c in "*?":
            out.append(".*" if c == "*" else ".")
            glob = True
        elif not quoted and c == "[" and closes and closes[-1] > k + 1:
            out.append(".*")
            glob = True
            k = closes[-1]
        else:
            out.append(re.escape(c))
        k += 1
    return "".join(out) if glob else None


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
        self.globs: list[Glob | None] = []
        #: The word being read, as (text, quoted) pieces.
        self.word: list[tuple[str, bool]] = []
        self.in_word = False
        #: Whether the word holds an expansion, so it may become any words.
        self.wild = False
        #: Whether it holds an unquoted glob or brace character.
        self.globby = False
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
            elif c == "$" and line[self.i + 1 : self.i + 2] == '"':  # $"...": translated
                self.wild = True
                self.i += 1
            elif c == "$" and line[self.i + 1 : self.i + 2] == "'":  # $'...': escapes decoded
                end = self._ansi_c(self.i + 2)
                if end < 0:
                    return None
                self.wild = True
                self._add(line[self.i : end])
                self.i = end
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
            elif c == "(" and self.in_word:  # a pattern group: @(push), zsh's pus(h), a=(..)
                close = self._closing(self.i)
                if close < 0:
                    return None
                self.wild = self.substitution = True
                self._add(line[self.i : close + 1])
                self.i = close + 1
            elif c in _OPERATORS:
                self._end_segment()
                self.i += 1
            else:
                self._add(c, quoted=False)
                self.globby = self.globby or c in _GLOBBY
                self.i += 1
        self._end_segment()
        return tuple(self.segments)

    def _add(self, text: str, *, quoted: bool = True) -> None:
        self.word.append((text, quoted))
        self.in_word = True

    def _end_word(self) -> None:
        if self.in_word:
            if self.skip_target:
                self.skip_target = False
            else:
                self.words.append("".join(text for text, _ in self.word))
                glob = _glob(tuple(self.word)) if self.globby else None
                self.globs.append(_ANY if self.wild else glob)
        self.word.clear()
        self.in_word = self.wild = self.globby = False

    def _end_segment(self) -> None:
        self._end_word()
        if self.words or self.redirect or self.substitution:
            globs = tuple(self.globs) if any(self.globs) else ()
            self.segments.append(
                Segment(tuple(self.words), self.redirect, self.substitution, self.expansion, globs)
            )
        self.words = []
        self.globs = []
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
            self.substitution = self.wild = True
            return end + 1
        after = line[j + 1 : j + 2]
        if after == "(":
            close = self._closing(j + 1)
            if close < 0:
                return -1
            self.substitution = self.wild = True
            return close + 1
        if after == "{":
            close = line.find("}", j + 2)
            if close < 0:
                return -1
            self.expansion = self.wild = True
            return close + 1
        if after and after in _NAME_START:
            end = j + 2
            while end < len(line) and line[end] in _NAME:
                end += 1
            self.expansion = self.wild = True
            return end
        if after and after in "0123456789@*#?$!-":
            self.expansion = self.wild = True
            return j + 2
        return j + 1  # a lone "$" is itself

    def _ansi_c(self, j: int) -> int:
        """Where the ``$'...'`` string whose text starts at ``j`` ends (-1: it never closes)."""
        line = self.line
        while j < len(line) and line[j] != "'":
            j += 2 if line[j] == "\\" else 1
        return j + 1 if j < len(line) else -1

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
        if self.in_word and "".join(t for t, _ in self.word).isdigit():  # "2>": a descriptor
            self.word.clear()
            self.in_word = self.wild = self.globby = False
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
            self.substitution = self.wild = True
            self._add(line[start : close + 1])
            self.i = close + 1
            return True
        self.skip_target = True  # the next word is the file (or descriptor) redirected to
        return True
