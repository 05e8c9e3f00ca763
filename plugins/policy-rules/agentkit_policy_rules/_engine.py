"""The rules engine: rules indexed by tool name, decided deny over ask over allow.

A decision looks only at the rules that can name the call's tool: the rules naming it exactly
(a dict lookup) and the glob rules that match it (matched once per tool name and cached), so
its cost follows the rules about that tool, not the size of the policy. A call whose tool has a
prefix rule is split into its shell segments, each decided on its own; the call gets the
strongest of their verdicts.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import math
import os
import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core.plugin import Grant
from agentkit_core.plugin import PolicyEngine

from ._matchers import Matcher
from ._rules import VERDICTS
from ._rules import Problem
from ._rules import Rule
from ._rules import ToolSettings
from ._rules import check_verdict
from ._rules import tools_from_table
from ._shell import Segment
from ._shell import split_command

#: How many tool names (and name-and-source pairs) the engine keeps decided rule lists for.
_CACHE = 4096
_GLOB = re.compile(r"[*?\[]")
_RANK = {v: i for i, v in enumerate(VERDICTS)}
#: The rule a call whose arguments cannot be read is denied by.
UNREADABLE = "unreadable-arguments"
#: How many combinations of two or more split arguments' commands a call is decided over one
#: by one; past it only the deny rules are read (exactly, argument by argument) and the call
#: asks. One argument's commands are each decided, however many.
SUBJECTS = 4096
#: The rule a call with more combinations than :data:`SUBJECTS` and no deny is asked by.
TOO_MANY = "too-many-commands"
#: A grant entry: ``name`` or ``name(specifier)``.
_ENTRY = re.compile(r"\s*([^()\s]+)\s*(?:\((.*)\))?\s*", re.S)


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A rule ready to decide: its matchers bound to the policy's directory."""

    rule: Rule
    position: int
    source: re.Pattern[str] | None
    checks: tuple[tuple[str, Matcher], ...]

    def matches(
        self,
        raw: Mapping[str, Any],
        segments: Mapping[str, Segment],
        label: str | None,
        strict: bool,
    ) -> bool | None:
        """True, False, or None when it cannot tell (the label or an argument unreadable)."""
        result: bool | None = True
        if self.source is not None:
            if label is None:
                result = None
            elif not self.source.fullmatch(label):
                return False
        for argument, matcher in self.checks:
            if argument not in raw:
                found = None
            else:
                value = segments.get(argument, raw[argument]) if matcher.splits else raw[argument]
                found = matcher.test(value, strict)
            if found is False:
                return False
            if found is None:
                result = None
        return result


@dataclass(frozen=True, slots=True)
class _ToolRules:
    """The rules about one tool name, by verdict, in policy order."""

    deny: tuple[_Compiled, ...]
    ask: tuple[_Compiled, ...]
    allow: tuple[_Compiled, ...]
    #: The arguments a prefix rule splits into shell segments.
    splits: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not (self.deny or self.ask or self.allow)


_NONE = _ToolRules((), (), (), ())


class RuleSet:
    """Rules indexed by tool name: the policy's own, or one grant's."""

    def __init__(self, rules: Sequence[Rule], cwd: str) -> None:
        self.rules = tuple(rules)
        self._exact: dict[str, list[_Compiled]] = {}
        self._globs: list[tuple[tuple[re.Pattern[str], ...], _Compiled]] = []
        self._cache: dict[str, _ToolRules] = {}
        for position, rule in enumerate(self.rules):
            compiled = _Compiled(
                rule,
                position,
                None if rule.source is None else re.compile(fnmatch.translate(rule.source)),
                tuple((arg, matcher.bind(cwd)) for arg, matcher in rule.match),
            )
            patterns = tuple(
                re.compile(fnmatch.translate(t)) for t in rule.tools if _GLOB.search(t)
            )
            if patterns:
                self._globs.append((patterns, compiled))
            for name in rule.tools:
                if not _GLOB.search(name):
                    self._exact.setdefault(name, []).append(compiled)

    def for_tool(self, name: str) -> _ToolRules:
        """The rules that can decide a call of ``name``."""
        found = self._cache.get(name)
        if found is not None:
            return found
        hits = {c.position: c for c in self._exact.get(name, ())}
        for patterns, compiled in self._globs:
            if any(p.fullmatch(name) for p in patterns):
                hits[compiled.position] = compiled
        if not hits:
            found = _NONE
        else:
            ordered = [hits[p] for p in sorted(hits)]
            splits = dict.fromkeys(a for c in ordered for a, m in c.checks if m.splits)
            by = {v: tuple(c for c in ordered if c.rule.verdict == v) for v in VERDICTS}
            found = _ToolRules(by["deny"], by["ask"], by["allow"], tuple(splits))
        if len(self._cache) >= _CACHE:
            self._cache.clear()
        self._cache[name] = found
        return found


def _arguments(call: ToolCall) -> dict[str, Any] | str:
    """``call``'s arguments as the tool would get them, or why they cannot be read.

    They are decoded as the agent decodes them before it runs a tool, which refuses what is
    not one JSON object, and an object naming a key twice (readers differ on which value
    counts, so the rules could read one value while the tool gets the other).
    """
    try:
        parsed = call.parsed_arguments()
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at position {exc.pos}"
    return parsed if isinstance(parsed, dict) else f"a JSON {type(parsed).__name__}, not an object"


class Policy(PolicyEngine):
    """A policy engine over allow / ask / deny rules, from a policy file or from code.

    Args:
        rules: the rules, in order (the first of the winning verdict is the one named).
        default: the verdict for a call no rule decides (``"ask"``).
        tools: per tool name, how a grant reads it (:class:`ToolSettings`, or its table as a
            file writes it: ``{"bash": {"aliases": ["Bash"], "specifier": {"command":
            "prefix"}}}``).
        cwd: the directory relative paths are read from, in ``within`` matchers and in the
            path arguments they test (default: the working directory now).
        path: the policy file it was read from, for messages.
    """

    name = "policy-rules"

    def __init__(
        self,
        rules: Sequence[Rule] = (),
        *,
        default: str = "ask",
        tools: Mapping[str, ToolSettings | Mapping[str, Any]] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        where = f"policy {os.fspath(path)!r}" if path is not None else "Policy(...)"
        try:
            self.default = check_verdict(default, ("default",))
            self.tools = _tool_settings({} if tools is None else tools)
        except Problem as problem:
            raise problem.error(where) from None
        named: list[Rule] = []
        seen: dict[str, Rule] = {}
        for n, rule in enumerate(rules, start=1):
            if not isinstance(rule, Rule):
                raise ConfigError(
                    f"{where}: rule {n} is {type(rule).__name__} {rule!r}, not a Rule",
                    value=rule,
                    source=where,
                )
            if not rule.id:
                rule = _with_id(rule, f"rule-{n}")
            if rule.id in seen:
                first = seen[rule.id]
                which = f"lines {first.line} and {rule.line}" if rule.line else "two rules"
                raise ConfigError(
                    f"{where}: two rules have the id {rule.id!r} ({which}); give each its own, "
                    "since a verdict names its rule by id",
                    value=rule.id,
                    source=where,
                )
            seen[rule.id] = rule
            named.append(rule)
        self.rules = tuple(named)
        self.path = None if path is None else os.fspath(path)
        self.cwd = os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd())
        self._set = RuleSet(self.rules, self.cwd)
        self._aliases = {a: name for name, s in self.tools.items() for a in s.aliases}
        self._removed: dict[tuple[str, str], bool] = {}

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, cwd: str | os.PathLike[str] | None = None
    ) -> Policy:
        """The policy a TOML policy file describes (see ``docs/policy.md``)."""
        from ._file import read_policy

        read = read_policy(Path(path))
        return cls(read.rules, default=read.default, tools=read.tools, cwd=cwd, path=path)

    def __repr__(self) -> str:
        where = f", path={self.path!r}" if self.path else ""
        ids = [r.id for r in self.rules]
        return f"Policy(default={self.default!r}, rules={ids!r}{where})"

    # ------------------------------------------------------------------ PolicyEngine

    def evaluate(self, call: ToolCall, source: str | None, grants: Sequence[Any]) -> ToolDecision:
        raw = _arguments(call)
        if isinstance(raw, str):
            return ToolDecision(
                "deny",
                f"the arguments of {call.name!r} cannot be read ({raw}): no rule can tell what "
                "the call would do",
                self.name,
                UNREADABLE,
            )
        sets = [self._set.for_tool(call.name)]
        sets += [g.for_tool(call.name) for g in grants]
        sets = [s for s in sets if not s.empty]
        if not sets:
            return self._default(call, named=False)
        columns = _columns(raw, [a for s in sets for a in s.splits])
        if len(columns) > 1 and math.prod(len(column) for column in columns) > SUBJECTS:
            return self._too_many(call, raw, columns, sets, source)
        best: ToolDecision | None = None
        for segments, shown in _subjects(columns):
            decision = self._subject(call, raw, segments, shown, sets, source)
            if best is None or _RANK[decision.kind] > _RANK[best.kind]:
                best = decision
                if best.kind == "deny":
                    break
        assert best is not None
        return best

    def removes(self, name: str, source: str) -> bool:
        key = (name, source)
        found = self._removed.get(key)
        if found is None:
            rules = self._set.for_tool(name).deny
            found = any(
                not c.checks and (c.source is None or c.source.fullmatch(source)) for c in rules
            )
            if len(self._removed) >= _CACHE:
                self._removed.clear()
            self._removed[key] = found
        return found

    def compile_grant(
        self, grant: Grant
    ) -> tuple[Any, tuple[str, ...], tuple[tuple[str, str], ...]]:
        rules: list[Rule] = []
        granted: list[str] = []
        refused: list[tuple[str, str]] = []
        for entry in grant.tools:
            try:
                rules.append(self._grant_rule(grant, entry))
            except (Problem, ConfigError, TypeError) as exc:
                refused.append((entry, str(getattr(exc, "message", exc))))
                continue
            granted.append(entry)
        return (RuleSet(rules, self.cwd) if rules else None), tuple(granted), tuple(refused)

    # ------------------------------------------------------------------ reading

    def unmatched(self, names: Iterable[str]) -> list[str]:
        """Warnings for each tool a rule names that matches none of ``names`` (the offered tools).

        A misspelt name or a glob that matches nothing is a rule that never applies.
        """
        offered = list(names)
        warnings = []
        for rule in self.rules:
            for tool in rule.tools:
                if _GLOB.search(tool):
                    if not fnmatch.filter(offered, tool):
                        warnings.append(
                            f"{self._where(rule)}: tool glob {tool!r} matches no offered tool"
                        )
                elif tool not in offered:
                    warnings.append(f"{self._where(rule)}: tool {tool!r} is not offered")
        return warnings

    def _where(self, rule: Rule) -> str:
        at = f" ({self.path} line {rule.line})" if self.path and rule.line else ""
        return f"rule {rule.id!r}{at}"

    # ------------------------------------------------------------------ deciding

    def _subject(
        self,
        call: ToolCall,
        raw: dict[str, Any],
        segments: Mapping[str, Segment],
        shown: str,
        sets: list[_ToolRules],
        label: str | None,
    ) -> ToolDecision:
        unsure: _Compiled | None = None
        for verdict in ("deny", "ask"):
            for rules in sets:
                for c in getattr(rules, verdict):
                    found = c.matches(raw, segments, label, strict=False)
                    if found:
                        return self._by(c, call, shown)
                    if found is None and unsure is None:
                        unsure = c
        if unsure is not None:
            why = (
                "its source is not known"
                if label is None and unsure.source
                else "its arguments cannot be read plainly"
            )
            return ToolDecision(
                "ask",
                f"cannot tell whether rule {unsure.rule.id!r} ({unsure.rule.verdict}) applies to "
                f"{call.name!r}{shown} ({why}), so a person decides",
                self.name,
                unsure.rule.id,
            )
        for rules in sets:
            for c in rules.allow:
                if c.matches(raw, segments, label, strict=True):
                    return self._by(c, call, shown)
        return self._default(call, named=True)

    def _too_many(
        self,
        call: ToolCall,
        raw: dict[str, Any],
        columns: list[list[tuple[str, Segment]]],
        sets: list[_ToolRules],
        label: str | None,
    ) -> ToolDecision:
        """A call whose split arguments make more than :data:`SUBJECTS` combinations.

        Deciding each combination took time in their product (two arguments of 3,000 commands
        each: minutes). A deny rule matches some combination exactly when, argument by
        argument, some command of each meets its checks (a check reads one argument), so the
        deny rules are still read exactly; without a deny the call asks a person.
        """
        for rules in sets:
            for c in rules.deny:
                witness = _witness(c, raw, columns, label)
                if witness is not None:
                    shown = ", ".join(f"`{' '.join(s.words)}`" for s in witness.values())
                    return self._by(c, call, f" ({shown})" if shown else "")
        sizes = " by ".join(f"{len(column)} of {column[0][0]!r}" for column in columns)
        return ToolDecision(
            "ask",
            f"{call.name!r} holds {sizes} commands, more combinations than the {SUBJECTS} "
            "decided one by one; no deny rule matches any, so a person decides",
            self.name,
            TOO_MANY,
        )

    def _by(self, c: _Compiled, call: ToolCall, shown: str) -> ToolDecision:
        rule = c.rule
        words = {"allow": "allows", "ask": "asks a person about", "deny": "denies"}[rule.verdict]
        reason = f"rule {rule.id!r} {words} {call.name!r}{shown}"
        if rule.reason:
            reason += f": {rule.reason}"
        return ToolDecision(rule.verdict, reason, self.name, rule.id)  # type: ignore[arg-type]

    def _default(self, call: ToolCall, *, named: bool) -> ToolDecision:
        which = "decides this call of" if named else "names"
        return ToolDecision(
            self.default,  # type: ignore[arg-type]
            f"no rule {which} {call.name!r}: the policy's default is {self.default}",
            self.name,
            "default",
        )

    # ------------------------------------------------------------------ grants

    def _grant_rule(self, grant: Grant, entry: str) -> Rule:
        parsed = _ENTRY.fullmatch(entry)
        if parsed is None:
            raise TypeError(f"{entry!r} is not a tool name or 'tool(specifier)'")
        name, spec = parsed.group(1), parsed.group(2)
        tool = self._aliases.get(name, name)
        rule_id = f"{grant.source}:{entry.strip()}"
        if spec is None or spec.strip() in ("*", ":*"):
            return Rule("allow", tool, id=rule_id, reason=f"granted by {grant.source}")
        settings = self.tools.get(tool)
        if settings is None or settings.specifier is None:
            raise TypeError(
                f"the policy does not say how to read {tool}(...): give [tools.{tool}] a "
                "specifier, such as { command = 'prefix' }"
            )
        argument, kind = settings.specifier
        value = _specified(kind, spec.strip())
        if not value:
            raise TypeError(f"{entry!r} specifies nothing")
        return Rule(
            "allow",
            tool,
            id=rule_id,
            match={argument: {kind: [value]}},
            reason=f"granted by {grant.source}",
        )


def _specified(kind: str, text: str) -> str:
    """A grant's specifier as a matcher's value (``git status:*`` is the prefix ``git status``)."""
    if kind == "prefix":
        for tail in (":*", " *", "*"):
            if text.endswith(tail):
                return text[: -len(tail)].strip()
    if kind == "within":
        for tail in ("/**", "/*", "**"):
            if text.endswith(tail):
                return text[: -len(tail)] or "."
    return text


def _columns(raw: dict[str, Any], splits: list[str]) -> list[list[tuple[str, Segment]]]:
    """Each split argument's segments, paired with its name.

    An argument that cannot be read as a command gives no column, so prefix matchers cannot
    tell.
    """
    columns: list[list[tuple[str, Segment]]] = []
    for argument in dict.fromkeys(splits):
        value = raw.get(argument)
        if not isinstance(value, str):
            continue
        segments = split_command(value)
        if segments is None:
            continue
        columns.append([(argument, s) for s in segments] or [(argument, Segment(()))])
    return columns


def _witness(
    c: _Compiled,
    raw: dict[str, Any],
    columns: list[list[tuple[str, Segment]]],
    label: str | None,
) -> dict[str, Segment] | None:
    """A combination of segments on which ``c`` (a deny or ask rule) matches, or None.

    Each of ``c``'s checks reads one argument, so an argument's segment is chosen on its own:
    the first that meets every check on that argument.
    """
    chosen: dict[str, Segment] = {}
    for column in columns:
        argument = column[0][0]
        checks = [m for a, m in c.checks if a == argument and m.splits]
        found = next((s for _, s in column if all(m.test(s, False) is True for m in checks)), None)
        if found is None:
            return None
        chosen[argument] = found
    return chosen if c.matches(raw, chosen, label, strict=False) is True else None


def _subjects(
    columns: list[list[tuple[str, Segment]]],
) -> Iterable[tuple[dict[str, Segment], str]]:
    """The call's subjects: one per combination of the split arguments' segments.

    Each is the segments by argument and how a reason shows it (`` `git push` ``).
    """
    if not columns:
        return [({}, "")]
    out = []
    for combination in itertools.product(*columns):
        shown = ", ".join(f"`{' '.join(s.words)}`" for _, s in combination)
        out.append((dict(combination), f" ({shown})"))
    return out


def _with_id(rule: Rule, rule_id: str) -> Rule:
    named = Rule.__new__(Rule)
    for name in ("verdict", "tools", "match", "source", "reason", "line"):
        object.__setattr__(named, name, getattr(rule, name))
    object.__setattr__(named, "id", rule_id)
    return named


def _tool_settings(
    tools: Mapping[str, ToolSettings | Mapping[str, Any]],
) -> dict[str, ToolSettings]:
    if not isinstance(tools, Mapping):  # refused there, as a file's would be
        return tools_from_table(tools)
    tables = {n: s for n, s in tools.items() if not isinstance(s, ToolSettings)}
    out = {n: s for n, s in tools.items() if isinstance(s, ToolSettings)}
    out.update(tools_from_table(tables))
    return out
