"""Reading a policy file: TOML, checked whole, every problem named with its file and line.

TOML parsers do not say on which line a key stood, so a problem's keys (``rules``, 2,
``match``, ``command``, ``prfix``) are found again in the text: the third ``[[rules]]`` table,
then the key within it. A key written in an inline table is found on the line that holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentkit_core import ConfigError

from ._rules import FILE_KEYS
from ._rules import Keys
from ._rules import Problem
from ._rules import Rule
from ._rules import ToolSettings
from ._rules import check_keys
from ._rules import check_verdict
from ._rules import rule_from_table
from ._rules import tools_from_table

_HEADER = re.compile(r"^\s*\[")
_RULES = re.compile(r"^\s*\[\[\s*rules\s*\]\]")
#: A header that ends a rule's lines: any but its own sub-tables (``[rules.match.command]``).
_OUTSIDE_RULE = re.compile(r"^\s*\[(?!\s*rules\s*\.)")


@dataclass(frozen=True)
class PolicyFile:
    """What a policy file says: the arguments ``Policy`` is built from."""

    rules: list[Rule]
    default: str
    tools: dict[str, ToolSettings]


def read_policy(path: Path) -> PolicyFile:
    """What the file at ``path`` says, checked whole (a ``ConfigError`` names file and line)."""
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        data: dict[str, Any] = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"cannot read the policy file {path}: {exc}", value=str(path), source=str(path)
        ) from exc
    lines = text.splitlines()
    try:
        check_keys(data, FILE_KEYS, "key", ())
        rules_table = data.get("rules", [])
        if not isinstance(rules_table, list):
            raise Problem(
                f"rules must be an array of tables ([[rules]]), got {rules_table!r}", ("rules",)
            )
        rules = [
            rule_from_table(t, i, _line(lines, ("rules", i))) for i, t in enumerate(rules_table)
        ]
        tools = tools_from_table(data.get("tools", {}))
        default = check_verdict(data.get("default", "ask"), ("default",))
    except Problem as problem:
        raise problem.error(f"{path}:{_line(lines, problem.keys)}") from None
    return PolicyFile(rules, default, tools)


def _line(lines: list[str], keys: Keys) -> int:
    """The line (from 1) where ``keys`` lead in the text: as near as the text shows."""
    start, end = 0, len(lines)
    found = 1
    rest = list(keys)
    if rest[:1] == ["rules"] and len(rest) > 1 and isinstance(rest[1], int):
        headers = [i for i, ln in enumerate(lines) if _RULES.match(ln)]
        if rest[1] < len(headers):
            start = headers[rest[1]]
            end = next(
                (i for i in range(start + 1, len(lines)) if _OUTSIDE_RULE.match(lines[i])),
                len(lines),
            )
            found = start + 1
        rest = rest[2:]
    elif rest[:1] == ["tools"] and len(rest) > 1:
        header = re.compile(rf"^\s*\[\s*tools\.\s*[\"']?{re.escape(str(rest[1]))}[\"']?\s*\]")
        at = next((i for i, ln in enumerate(lines) if header.match(ln)), None)
        if at is not None:
            start, found = at, at + 1
            end = next(
                (i for i in range(at + 1, len(lines)) if _HEADER.match(lines[i])), len(lines)
            )
            rest = rest[2:]
        else:
            rest = rest[1:]
    elif rest:  # a top-level key: before the first table
        end = next((i for i, ln in enumerate(lines) if _HEADER.match(ln)), len(lines))
    for key in rest:
        if isinstance(key, int):
            continue
        # ``key =`` in a table or an inline table, or ``.key]`` / ``.key.`` in a sub-table header
        pattern = re.compile(rf"(^|[\s{{,.\[])[\"']?{re.escape(key)}[\"']?\s*(=|\]|\.)")
        at = next((i for i in range(start, end) if pattern.search(lines[i])), None)
        if at is None:
            break
        start, found = at, at + 1
    return found
