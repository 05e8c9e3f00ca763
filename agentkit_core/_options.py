"""The option records ``Agent(...)`` and ``Kit(...)`` take, grouped by what they configure.

Each record is a frozen value (``Limits``, ``GuardOptions``, ``SessionOptions``,
``CompactionOptions``, ``ToolOptions``)
passed under the key of its group:
``Kit(limits=Limits(max_turns=5), guards=GuardOptions(["redact"]))``.
The flat keywords (``max_turns=5``, ``guards=["redact"]``) stay as thin aliases that build the
same record; giving a record and one of its flat keywords at once is a :class:`ConfigError`.
A field a record does not have is the nearest-key :class:`ConfigError` of the kit's options.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import ClassVar
from typing import TypeVar

from ._context import RunContext
from ._errors import ConfigError
from ._hooks import Hooks
from ._middleware import Middleware
from ._recorder import Recorder
from ._records import record
from ._requests import Prompt
from ._requests import WorkingContext
from ._scope import DEFAULT_MODEL_DEADLINE
from ._scope import Budget
from ._tables import STR
from ._tables import Kind
from ._tables import check_kinds
from ._tables import sequence_of
from ._tables import unknown_key
from ._tables import wrong_kind
from ._tools import Tool
from ._tools import ToolFilter
from ._tools import ToolWrap
from ._tools import union_of

if TYPE_CHECKING:
    # The records' public hints resolve by their door (``_public.publish`` spells them out), so
    # a run that configures no guard, policy, session or fold does not import those modules.
    from ._agent import Agent
    from ._fold import Folding
    from ._guard import Guard
    from ._guard_chain import GuardChain
    from ._guardrails import Guardrail
    from ._kit import AgentConfig
    from ._kit import Kit
    from ._policy import PolicyEngine
    from ._sessions import SessionHeader
    from ._sessions import Sessions
    from ._sessions import SessionStore
    from ._toolunion import ToolConflict
    from ._verdicts import VerdictObserver

R = TypeVar("R", bound="_Record")


class _Record:
    """A frozen options record: an unknown field is the nearest-key error, not a TypeError."""

    #: The keyword the record is passed under (``Kit(limits=...)``), for error messages.
    key: ClassVar[str]

    def __new__(cls: type[R], *args: object, **fields: object) -> R:
        known = _defaults(cls)
        if not fields.keys() <= known.keys():
            unknown = next(name for name in fields if name not in known)
            raise unknown_key(unknown, list(known), f"{cls.__name__}(...)")
        return super().__new__(cls)

    def given(self) -> dict[str, object]:
        """The fields set to something other than their default: what the flat keys would say."""
        return {
            name: getattr(self, name)
            for name, default in _defaults(type(self)).items()
            if getattr(self, name) != default
        }


_DEFAULTS: dict[type[_Record], dict[str, object]] = {}


def _defaults(cls: type[_Record]) -> dict[str, object]:
    """Each field of a record and its default, read once per record class (an Agent reads two)."""
    known = _DEFAULTS.get(cls)
    if known is None:
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        known = _DEFAULTS[cls] = {f.name: f.default for f in fields}
    return known


@record(frozen=True)
class Limits(_Record):
    """How far a run may go: turns, parallel tool calls, the time of a tool or model call, cost.

    Args:
        max_turns: model calls a run may make.
        max_parallel_tools: how many tool calls of one batch run at once (at least 1).
        tool_timeout: seconds a tool call may take when the tool sets no timeout of its own
            (None for no limit); past it the call is a tool error the model reads. Agent only.
        model_deadline: seconds one model call may take in all, its retries and a whole
            stream included (None for none); past it the run fails with
            ``ModelDeadlineExceeded``, checkpointed FAILED. Agent only.
        budget: the :class:`Budget` of every run (tokens, requests, tool calls, cost).
            Agent only.
    """

    key: ClassVar[str] = "limits"

    max_turns: int = 10
    max_parallel_tools: int = 8
    tool_timeout: float | None = 300.0
    model_deadline: float | None = DEFAULT_MODEL_DEADLINE
    budget: Budget | None = None


@record(frozen=True)
class GuardOptions(_Record):
    """What checks a run: guards, the guardrail, the policy engine, and who hears the verdicts.

    Args:
        guards: the guards checking every instruction part (kit), request, answer and turn:
            installed guards by name (kit only; ``["redact", "max-input"]``, built with
            ``guard_options[name]``, run in plugin order), then :class:`Guard` objects in the
            order given; an agent also takes a :class:`GuardChain`. See ``docs/guards.md``.
        guard_options: options per guard named in ``guards`` (kit only).
        guard_fail_open: the named guards whose raising lets the text through (kit only).
        guardrail: a Guardrail, the name of an installed one (built with its configured
            settings and ``guardrail_options``), or None for the one the configuration names.
            Every tool call is checked with it (``egress()``).
        guardrail_options: options of the guardrail named (kit only).
        policy: a :class:`PolicyEngine`, or the path of a policy file an installed engine
            reads; it decides every tool call before the hooks (``docs/policy.md``).
        policy_engine: names the engine that reads the file, when several are installed.
        verdict_observer: told every verdict a run reports (policy, guards, approvals, hooks).
    """

    key: ClassVar[str] = "guards"

    guards: GuardChain | Sequence[str | Guard] | None = None
    guard_options: Mapping[str, Mapping[str, object] | None] | None = None
    guard_fail_open: Sequence[str] = ()
    guardrail: Guardrail | str | None = None
    guardrail_options: Mapping[str, object] | None = None
    policy: PolicyEngine | str | os.PathLike[str] | None = None
    policy_engine: str | None = None
    verdict_observer: VerdictObserver | None = None


@record(frozen=True)
class SessionOptions(_Record):
    """The session a kit records its conversation in (``docs/sessions.md``); needs ``Kit.open``.

    Args:
        session: the store: a URL such as ``sqlite:///sessions.db``, a SessionStore or a
            Sessions.
        header: fields of a new session's header over the kit's own, or a SessionHeader.
        session_id: the session's id: continued at its leaf when it exists, else created.
        resume: an existing session to continue at its leaf.
        fork, fork_at: a new session based at item ``fork_at`` (default: the leaf) of session
            ``fork``.
    """

    key: ClassVar[str] = "session"

    session: str | Sessions | SessionStore | None = None
    header: SessionHeader | Mapping[str, object] | None = None
    session_id: str | None = None
    resume: str | None = None
    fork: str | None = None
    fork_at: str | None = None


@record(frozen=True)
class CompactionOptions(_Record):
    """How a kit keeps the transcript within budget (``docs/compaction.md``).

    Args:
        compaction: the fold: the keywords of ``Folding`` (``{"budget": 60_000}``) or a
            Folding.
        compactor, compactor_options: a compactor plugin by name and its options, run as
            ``compaction()`` middleware.
    """

    key: ClassVar[str] = "compaction"

    compaction: Mapping[str, object] | Folding | None = None
    compactor: str | None = None
    compactor_options: Mapping[str, object] | None = None


@record(frozen=True)
class ToolOptions(_Record):
    """The tools a kit offers, from every source, and how their union is shaped.

    Args:
        tools: the user's own tools or typed functions (first in the union).
        agents: child agents offered as tools.
        handoffs: kits the conversation may be handed to (``transfer_to_<name>`` tools).
        tool_sources: options per plugin-provided tool source, connected by ``Kit.open``.
        mcp: MCP servers (command lines or URLs), short for ``tool_sources={"mcp": ...}``.
        tool_filter, tool_wrap, on_tool_conflict: see ``ToolUnion``.
        deferred_tools: ``fn(kit)``, called once the kit opened its session and policy; the
            tools it returns join ``tools``.
    """

    key: ClassVar[str] = "tools"

    tools: Sequence[Tool] = ()
    agents: Sequence[Agent] = ()
    handoffs: Sequence[Kit] = ()
    tool_sources: Mapping[str, Mapping[str, object] | None] | None = None
    mcp: Sequence[str] = ()
    tool_filter: ToolFilter | None = None
    tool_wrap: ToolWrap | None = None
    on_tool_conflict: Callable[[ToolConflict], object] | None = None
    deferred_tools: Callable[[Kit], Sequence[Tool | Callable[..., object]]] | None = None


#: Every record, by the key it is passed under.
RECORDS: dict[str, type[_Record]] = {
    r.key: r for r in (Limits, GuardOptions, SessionOptions, CompactionOptions, ToolOptions)
}


def flatten(
    options: Mapping[str, object], where: str, keys: Collection[str] | None = None
) -> dict[str, object]:
    """``options`` with each record replaced by the flat keys it sets.

    A record and one of its flat keys given at once is a :class:`ConfigError`; ``keys``, when
    given, are the flat keys the receiver reads (a record field outside them, set, is refused).
    """
    flat = dict(options)
    for key, kind in RECORDS.items():
        value = flat.get(key)
        if not isinstance(value, kind):
            continue
        del flat[key]
        given = value.given()
        for name in given:
            if name != key and name in options:
                raise _both(kind, name, where)
            if keys is not None and name not in keys:
                reads = [f.name for f in dataclasses.fields(kind) if f.name in keys]  # type: ignore[arg-type]
                raise ConfigError(
                    f"{where} does not take {type(value).__name__}({name}=...); the fields it "
                    f"reads are {', '.join(reads)}",
                    value=name,
                    source=where,
                )
        flat.update(given)
    return flat


def _both(record: type[_Record], name: str, where: str) -> ConfigError:
    """The error for a record given beside one of its own flat keywords."""
    return ConfigError(
        f"{where} got both {record.key}={record.__name__}(...) and {name}=; the flat "
        f"{name}= is short for {record.__name__}({name}=...): pass one",
        value=name,
        source=where,
    )


def record_of(cls: type[R], record: R | None, where: str, **flat: object) -> R:
    """``record``, or the record the flat keywords (its aliases) build when it is None.

    A flat keyword set to other than its default beside a record is a :class:`ConfigError`.
    """
    if record is None:
        return cls(**flat)
    if not isinstance(record, cls):
        raise wrong_kind(where, f"a {cls.__name__}(...)", record)
    defaults = _defaults(cls)
    for name, value in flat.items():
        if value is not defaults[name] and value != defaults[name]:
            raise _both(cls, name, where)
    return record


def agent_guards(
    guards: GuardOptions | GuardChain | Sequence[Guard] | None, **flat: object
) -> GuardOptions:
    """``Agent(guards=...)``'s record: given, or built from the guards and the flat aliases.

    An agent takes objects: guards by name and their options are the kit's (or
    ``build_guard_chain(..., manager=)``'s), refused here naming them.
    """
    where = "Agent(guards=)"
    if isinstance(guards, GuardOptions):
        record = record_of(GuardOptions, guards, where, **flat)
    else:
        record = GuardOptions(guards=guards, **flat)  # type: ignore[arg-type]
    given = record.guards
    if given is None:  # no guards: the flat options are checked, the chain is not imported
        named: list[object] = []
    else:
        from ._guard_chain import GuardChain

        if not isinstance(given, GuardChain | Sequence) or isinstance(given, str | bytes):
            raise wrong_kind(where, "a list of guards, a GuardChain or a GuardOptions", given)
        named = [] if isinstance(given, GuardChain) else [g for g in given if isinstance(g, str)]
    for name, value in (
        ("guards by name", named),
        ("guard_options", record.guard_options),
        ("guard_fail_open", record.guard_fail_open),
        ("guardrail_options", record.guardrail_options),
    ):
        if value:
            raise ConfigError(
                f"{where} got {name} ({value!r}): an agent takes Guard objects (or a "
                "GuardChain); build named guards with Kit(guards=...) or "
                "build_guard_chain(names, options=..., fail_open=..., manager=pm)",
                value=value,
                source=where,
            )
    if given is None or isinstance(given, GuardChain):
        return record
    return dataclasses.replace(record, guards=GuardChain(given))  # type: ignore[arg-type]


def config_options(config: AgentConfig, overrides: Mapping[str, object]) -> dict[str, object]:
    """``Agent.from_config``'s keywords: the config's fields, then ``overrides``.

    ``instructions`` is the agent's ``prompt``; a record among the overrides replaces the
    fields it groups (``limits=Limits(...)`` the config's ``max_turns``...).
    """
    options = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    options["prompt"] = options.pop("instructions")
    for value in overrides.values():
        if isinstance(value, _Record):
            for f in dataclasses.fields(value):  # type: ignore[arg-type]
                options.pop(f.name, None)
    return {**options, **overrides}


def agent_compaction(compaction: object) -> Folding | None:
    """``Agent(compaction=)`` as given, when it is a Folding (or None)."""
    if compaction is None:
        return None
    from ._fold import Folding

    if isinstance(compaction, Folding):
        return compaction
    raise ConfigError(
        f"compaction= takes a Folding (the fold the transcript keeps), got "
        f"{compaction!r}; a per-request compactor goes in middlewares=[compaction(c)]",
        value=compaction,
        source="Agent(compaction=)",
    )


_SEQUENCE = sequence_of(object, "a list")


def _is_middleware(m: object) -> bool:
    return isinstance(m, Middleware) or callable(m)


#: The kinds of the arguments an agent keeps as they are, checked before anything is built:
#: anything else failed deep inside a run (``'dict' object has no attribute 'before_turn'``).
#: The other arguments are checked where they are read (limits, guards, model, settings...).
_KINDS: dict[str, Kind] = {
    "name": STR,
    "description": STR,
    "prompt": Kind("a string or a Prompt", lambda v: isinstance(v, str | Prompt)),
    "tools": Kind(
        "a list of tools (functions or Tool values), or a ToolUnion",
        lambda v: union_of(v) is not None or _SEQUENCE.check(v),
    ),
    "middlewares": Kind(
        "a list of middlewares (Middleware objects or model-call functions)",
        lambda v: _SEQUENCE.check(v) and all(map(_is_middleware, v)),
    ),
}
#: The same for the arguments that may be None (their default).
_KINDS_OR_NONE: dict[str, Kind] = {
    "hooks": Kind("a Hooks", lambda v: isinstance(v, Hooks)),
    "budget": Kind("a Budget", lambda v: isinstance(v, Budget)),
    "recorder": Kind("a Recorder", lambda v: isinstance(v, Recorder)),
    "elicitor": Kind("a function (question, schema, secret) -> answer", callable),
    "verdict_observer": Kind("a function (verdict) -> None", callable),
}


#: The same for a run's arguments (``run``, ``resume`` and the streams), each may be None.
_RUN_KINDS: dict[str, Kind] = {
    "ctx": Kind("a RunContext", lambda v: isinstance(v, RunContext)),
    "wc": Kind("a WorkingContext", lambda v: isinstance(v, WorkingContext)),
    "on_event": Kind("a function (event) -> None", callable),
}


def check_agent_arguments(given: Mapping[str, object]) -> None:
    """Each argument of ``Agent(...)`` in ``given`` that the tables above know is of its kind."""
    check_kinds(given, _KINDS, "Agent", none=False)
    check_kinds(given, _KINDS_OR_NONE, "Agent")


def check_run_arguments(ctx: object, wc: object, on_event: object) -> None:
    """A run's ``ctx``, ``wc`` and ``on_event`` (each may be None) of their kinds."""
    check_kinds({"ctx": ctx, "wc": wc, "on_event": on_event}, _RUN_KINDS, "run")
