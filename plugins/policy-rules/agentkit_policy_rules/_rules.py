"""Rules and tool settings, and the one reader that checks them, from a file or from code.

A problem is raised as :class:`Problem`, which carries the keys leading to what is wrong
(``("rules", 2, "match", "command", "prfix")``); the file reader turns those keys into the
line of the file, and code gets the same message as a ``ConfigError``.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Final

from agentkit_core import ConfigError

from ._matchers import MATCHERS
from ._matchers import Matcher
from ._matchers import invisible

#: The verdicts a rule may give, weakest first.
VERDICTS: Final = ("allow", "ask", "deny")
#: The keys of a rule.
RULE_KEYS: Final = ("id", "verdict", "tool", "source", "match", "reason")
#: The keys of a tool's settings.
TOOL_KEYS: Final = ("aliases", "specifier")
#: The top-level keys of a policy file.
FILE_KEYS: Final = ("default", "rules", "tools")

Keys = tuple[str | int, ...]


class Problem(Exception):
    """What is wrong, and the keys that lead to it in the policy's tables."""

    def __init__(self, message: str, keys: Keys) -> None:
        super().__init__(message)
        self.message = message
        self.keys = keys

    def error(self, where: str) -> ConfigError:
        """The problem as a ConfigError naming ``where`` (``Rule(...)``, or a file's line)."""
        return ConfigError(f"{where}: {self.message}", value=self.keys[-1], source=where)


def choices(what: str, given: Any, valid: Sequence[str]) -> str:
    """``unknown <what> 'x'; the <what>s are a, b, c`` with the nearest valid one suggested."""
    close = difflib.get_close_matches(str(given), list(valid), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {what} {given!r}{hint}; the {what}s are {', '.join(valid)}"


def check_keys(table: Mapping[str, Any], valid: Sequence[str], what: str, keys: Keys) -> None:
    """Every key of ``table`` is one of ``valid``."""
    for key in table:
        if key not in valid:
            raise Problem(choices(what, key, valid), (*keys, key))


def check_verdict(value: Any, keys: Keys) -> str:
    if value not in VERDICTS:
        raise Problem(choices("verdict", value, VERDICTS), keys)
    return str(value)


def _strings(value: Any, what: str, keys: Keys) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if (
        not isinstance(items, list | tuple)
        or not items
        or not all(isinstance(v, str) and v for v in items)
    ):
        raise Problem(f"{what} must be a non-empty string or a list of them, got {value!r}", keys)
    for item in items:
        _visible(item, what, keys)
    return tuple(items)


def _visible(text: str, what: str, keys: Keys) -> None:
    """Refuse a name or glob that shows something other than it is.

    One holding a character that shows nothing (see :func:`invisible`), or one that only looks
    like a plain name (see :func:`_imitation`).
    """
    char = invisible(text)
    if char is not None:
        raise Problem(
            f"{what} {text!r} holds the invisible character U+{ord(char):04X}; remove it", keys
        )
    found = _imitation(text)
    if found is not None:
        char, reads = found
        raise Problem(
            f"{what} {text!r} holds U+{ord(char):04X} ({unicodedata.name(char, '?')}), which "
            f"reads as {reads!r} and is not it: the rule would name no tool; write the name in "
            "plain letters",
            keys,
        )


def _imitation(text: str) -> tuple[str, str] | None:
    """The first character of ``text`` that makes it imitate a plain name, and what it reads as.

    A compatibility form (fullwidth ``ｂ``, the ligature ``ﬁ``: NFKC makes it plainer), or, in a
    name that reads as plain ASCII once look-alikes are folded (``bаsh``), a letter of another
    script read as a Latin one (the Cyrillic ``а``). A letter with an accent (``é``), a name
    in another script (``сеть``) and ``ß`` are names like any other.
    """
    if text.isascii():
        return None
    for char in text:
        plain = unicodedata.normalize("NFKC", char)
        if plain != char:
            return char, plain
    from agentkit_core.plugin import fold_lookalikes

    if not fold_lookalikes(text).isascii():
        return None
    for char in text:
        if char.isascii() or unicodedata.normalize("NFD", char)[0].isascii():
            continue
        reads = fold_lookalikes(char)
        if len(reads) == 1 and reads.isascii():
            return char, reads
    return None


def parse_match(value: Any, keys: Keys) -> tuple[tuple[str, Matcher], ...]:
    """``{argument: {kind: values}}`` (or ``{argument: Matcher}``) as (argument, matcher) pairs."""
    if not isinstance(value, Mapping) or not value:
        raise Problem(
            "match must be a table of arguments, such as { command = { prefix = ['git "
            f"status'] }} }}, got {value!r}; leave match out for a rule about every call of "
            "the tool",
            keys,
        )
    pairs: list[tuple[str, Matcher]] = []
    for argument, spec in value.items():
        here = (*keys, argument)
        if isinstance(spec, Matcher):
            pairs.append((argument, spec))
            continue
        if not isinstance(spec, Mapping) or not spec:
            raise Problem(
                f"argument {argument!r} must map matchers to values, such as {{ prefix = "
                f"['git status'] }}; the matchers are {', '.join(MATCHERS)}",
                here,
            )
        for kind, values in spec.items():
            maker = MATCHERS.get(kind)
            if maker is None:
                raise Problem(choices("matcher", kind, list(MATCHERS)), (*here, kind))
            items = values if isinstance(values, list | tuple) else [values]
            try:
                pairs.append((argument, maker(*items)))
            except TypeError as exc:
                raise Problem(f"{kind} of argument {argument!r}: {exc}", (*here, kind)) from None
    return tuple(pairs)


@dataclass(frozen=True, init=False)
class Rule:
    """One rule: ``verdict`` for calls of ``tool`` (a name, a glob, or a list of them).

    ``source`` narrows it to tools whose source label matches a glob (``"mcp:*"``);
    ``match`` to calls whose arguments match every matcher given, as matchers or as a policy
    file writes them (``{"command": {"prefix": ["git status"]}}``). ``id`` names it in verdicts
    (``rule-N`` by position when empty); ``reason`` is what the model and a person are told.
    """

    verdict: str
    tools: tuple[str, ...]
    id: str
    match: tuple[tuple[str, Matcher], ...]
    source: str | None
    reason: str
    #: The line of the policy file the rule starts on (0 for a rule made in code).
    line: int

    def __init__(
        self,
        verdict: str,
        tool: str | Sequence[str],
        *,
        id: str = "",
        match: Mapping[str, Any] | None = None,
        source: str | None = None,
        reason: str = "",
        line: int = 0,
    ) -> None:
        try:
            fields = _rule_fields(
                {
                    "verdict": verdict,
                    "tool": tool,
                    "id": id,
                    "match": match,
                    "source": source,
                    "reason": reason,
                },
                (),
            )
        except Problem as problem:
            raise problem.error("Rule(...)") from None
        for name, value in fields.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "line", line)

    @property
    def bare(self) -> bool:
        """A rule with no matchers: about the tool, whatever its arguments."""
        return not self.match


def _rule_fields(table: Mapping[str, Any], keys: Keys) -> dict[str, Any]:
    check_keys(table, RULE_KEYS, "key", keys)
    if "verdict" not in table:
        raise Problem(f"the rule has no verdict; give one of {', '.join(VERDICTS)}", keys)
    if "tool" not in table:
        raise Problem("the rule has no tool; name one, or a glob such as '*' for every tool", keys)
    rule_id = table.get("id", "")
    if not isinstance(rule_id, str):
        raise Problem(f"id must be a string, got {rule_id!r}", (*keys, "id"))
    source = table.get("source")
    if source is not None and (not isinstance(source, str) or not source):
        raise Problem(
            f"source must be a glob over a source label, got {source!r}", (*keys, "source")
        )
    if source is not None:
        _visible(source, "source", (*keys, "source"))
    reason = table.get("reason", "")
    if not isinstance(reason, str):
        raise Problem(f"reason must be a string, got {reason!r}", (*keys, "reason"))
    return {
        "verdict": check_verdict(table["verdict"], (*keys, "verdict")),
        "tools": _strings(table["tool"], "tool", (*keys, "tool")),
        "id": rule_id,
        "match": _match(table.get("match"), (*keys, "match")),
        "source": source,
        "reason": reason,
    }


def _match(value: Any, keys: Keys) -> tuple[tuple[str, Matcher], ...]:
    """A rule's matchers; None (no ``match``) is none: the rule is about every call of its tool.

    Only None is absent: an empty or falsy ``match`` (``[]``, ``{}``, ``false``, ``""``) is
    refused by :func:`parse_match`, never read as no matchers, which would widen an allow rule
    to every call of the tool.
    """
    return () if value is None else parse_match(value, keys)


def rule_from_table(table: Any, index: int, line: int) -> Rule:
    """A rule from ``[[rules]]`` number ``index`` (from 0) of a file, starting at ``line``."""
    keys: Keys = ("rules", index)
    if not isinstance(table, Mapping):
        raise Problem(f"a rule must be a table ([[rules]]), got {table!r}", keys)
    fields = _rule_fields(table, keys)
    rule = Rule.__new__(Rule)
    for name, value in fields.items():
        object.__setattr__(rule, name, value)
    object.__setattr__(rule, "line", line)
    return rule


@dataclass(frozen=True, init=False)
class ToolSettings:
    """How the policy reads a tool's name and arguments in a grant (a skill's allowed-tools).

    ``aliases`` are other names a grant may call the tool by (``Bash`` for ``bash``);
    ``specifier`` says what ``tool(text)`` means: ``("command", "prefix")`` reads
    ``bash(git status:*)`` as a prefix matcher over ``command``.
    """

    aliases: tuple[str, ...]
    specifier: tuple[str, str] | None

    def __init__(
        self,
        aliases: Sequence[str] = (),
        specifier: tuple[str, str] | Mapping[str, str] | None = None,
    ) -> None:
        try:
            fields = _tool_fields({"aliases": aliases, "specifier": specifier}, ())
        except Problem as problem:
            raise problem.error("ToolSettings(...)") from None
        object.__setattr__(self, "aliases", fields[0])
        object.__setattr__(self, "specifier", fields[1])


def _tool_fields(
    table: Mapping[str, Any], keys: Keys
) -> tuple[tuple[str, ...], tuple[str, str] | None]:
    check_keys(table, TOOL_KEYS, "key", keys)
    aliases = table.get("aliases", ())
    if not isinstance(aliases, list | tuple) or not all(isinstance(a, str) and a for a in aliases):
        raise Problem(f"aliases must be a list of names, got {aliases!r}", (*keys, "aliases"))
    spec = table.get("specifier")
    if spec is None:
        return tuple(aliases), None
    pairs = list(spec.items()) if isinstance(spec, Mapping) else [spec]
    if len(pairs) != 1 or not isinstance(pairs[0], tuple | list) or len(pairs[0]) != 2:
        raise Problem(
            f"specifier must name one argument and its matcher, such as {{ command = "
            f"'prefix' }}, got {spec!r}",
            (*keys, "specifier"),
        )
    argument, kind = pairs[0]
    if kind not in MATCHERS:
        raise Problem(choices("matcher", kind, list(MATCHERS)), (*keys, "specifier", argument))
    return tuple(aliases), (str(argument), str(kind))


def tools_from_table(value: Any) -> dict[str, ToolSettings]:
    """The ``[tools.NAME]`` tables of a file."""
    if not isinstance(value, Mapping):
        raise Problem(f"tools must be a table of tool names, got {value!r}", ("tools",))
    out: dict[str, ToolSettings] = {}
    for name, table in value.items():
        keys: Keys = ("tools", name)
        if not isinstance(table, Mapping):
            raise Problem(f"tools.{name} must be a table, got {table!r}", keys)
        settings = ToolSettings.__new__(ToolSettings)
        aliases, specifier = _tool_fields(table, keys)
        object.__setattr__(settings, "aliases", aliases)
        object.__setattr__(settings, "specifier", specifier)
        out[name] = settings
    return out
