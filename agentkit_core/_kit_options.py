"""The options a Kit takes: their keys and types, and how each group is checked and built.

``Kit`` reads its options through these functions; each is exported too, so a product that
assembles an agent by hand builds the same objects the kit would (``docs/manual.md``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeAlias
from typing import TypedDict
from typing import TypeVar
from typing import cast

# Imported at run time, not for the type checker only: KitOptions is public, and its hints
# must resolve (typing.get_type_hints, pydantic).
from ._agent import Agent
from ._errors import ConfigError
from ._executor import Executor
from ._fold import Folding
from ._guard import Guard
from ._guard_chain import GuardChain
from ._guardrails import Guardrail
from ._hooks import FIELDS
from ._hooks import Hooks
from ._lookup import build_guard_chain
from ._lookup import get_compactor
from ._lookup import get_guardrail
from ._lookup import open_memory_block
from ._lookup import plugin_hooks
from ._lookup import resolve_guardrail
from ._lookup import resolve_model
from ._memory import check_k
from ._memory_block import MEMORY_OPTIONS
from ._memory_block import MemoryBlock
from ._memory_block import MemoryOptions
from ._memory_ground import MemoryGrounder
from ._message_filter import MessageFilter
from ._message_filter import checked_filter
from ._messages import Message
from ._middleware import Middleware
from ._middleware import MiddlewareLike
from ._models import Model
from ._models import ModelRequest
from ._models import ModelSettings
from ._options import CompactionOptions
from ._options import GuardOptions
from ._options import Limits
from ._options import SessionOptions
from ._options import ToolOptions
from ._options import flatten
from ._plugins import PluginManager
from ._policy import PolicyEngine
from ._sessions import SessionHeader
from ._sessions import Sessions
from ._sessions import SessionStore
from ._tables import INT
from ._tables import STR
from ._tables import Kind
from ._tables import check_kinds
from ._tables import sequence_of
from ._tables import unknown_key
from ._tools import Tool
from ._tools import ToolFilter
from ._tools import ToolResult
from ._tools import ToolWrap
from ._toolunion import ToolConflict
from ._verdicts import VerdictObserver
from .hookspecs import HookFunction
from .hookspecs import ToolVerdict

if TYPE_CHECKING:
    from ._kit import Kit

T = TypeVar("T")
#: One user hook for a contested field, or several (called in order).
Hook: TypeAlias = HookFunction[T] | Sequence[HookFunction[T]]
#: One plugin's options: the keywords its factory takes.
PluginOptions: TypeAlias = Mapping[str, Any]


class KitOptions(TypedDict, total=False):
    """The options ``Kit(...)``, ``Kit.open(...)`` and ``Kit.from_file(...)`` take.

    A misspelled key or a wrong type is a mypy error where the call is written, and an
    unknown key a :class:`ConfigError` at run time; see :class:`Kit` for what each one does.
    The plugins' own option dicts (``parts``, ``tool_sources``, ``compactor_options``,
    ``guardrail_options``) are the keywords of the plugin's factory, typed there. The records
    of :mod:`agentkit_core.options` group them: ``limits``, and ``tools``, ``compaction``,
    ``guards`` and ``session`` take a record or their own flat value (:func:`kit_options`).
    """

    model: Model | str | None
    name: str
    description: str
    instructions: str
    parts: Mapping[str, PluginOptions | None]
    order: Sequence[str] | None
    instruction_budget: int | None
    memory: MemoryOptions | None
    tools: Sequence[Tool] | ToolOptions
    agents: Sequence[Agent]
    handoffs: Sequence[Kit]
    tool_sources: Mapping[str, PluginOptions | None]
    #: Commands, URLs, option tables or the MCP plugin's ``ServerParams``: the plugin reads them.
    mcp: Sequence[object]
    tool_filter: ToolFilter | None
    tool_wrap: ToolWrap | None
    deferred_tools: Callable[[Kit], Sequence[Tool | Callable[..., Any]]] | None
    message_filter: MessageFilter | None
    on_tool_conflict: Callable[[ToolConflict], object] | None
    compaction: Mapping[str, Any] | Folding | CompactionOptions | None
    compactor: str | None
    compactor_options: PluginOptions | None
    guardrail: str | None
    guardrail_options: PluginOptions | None
    guards: Sequence[str | Guard] | GuardOptions
    guard_options: Mapping[str, PluginOptions | None]
    guard_fail_open: Sequence[str]
    executor: Executor | str | None
    executor_options: PluginOptions | None
    policy: PolicyEngine | str | os.PathLike[str] | None
    policy_engine: str | None
    middlewares: Sequence[MiddlewareLike]
    max_turns: int
    max_parallel_tools: int
    limits: Limits
    settings: ModelSettings | None
    manager: PluginManager | None
    session: str | Sessions | SessionStore | SessionOptions | None
    header: SessionHeader | Mapping[str, Any] | None
    session_id: str | None
    resume: str | None
    fork: str | None
    fork_at: str | None
    verdict_observer: VerdictObserver | None
    before_model_call: Hook[ModelRequest]
    before_tool_call: Hook[ToolVerdict]
    after_tool_call: Hook[ToolResult]
    output_guard: Hook[Message]
    should_stop_after_turn: Hook[str]
    before_turn: Hook[Sequence[Message]]
    transform: Hook[Sequence[Message]]


#: Every key KitOptions knows.
KIT_OPTIONS: frozenset[str] = frozenset(KitOptions.__optional_keys__)


def kit_options(options: Mapping[str, object]) -> dict[str, object]:
    """``options`` with each record (``limits=Limits(...)``...) spread into its flat keys.

    A record beside one of its own flat keys, or one setting a field a kit does not read
    (``Limits(tool_timeout=...)``, an agent's), is a :class:`ConfigError`.
    """
    return flatten(options, "Kit(...)", KIT_OPTIONS)


#: The kinds of the options whose value a kit uses as it is, from code or a file, with no
#: check of its own: anything else would fail deep inside (``'int' object is not iterable``).
#: None is left to the option's default; the other options are checked where they are read.
_KINDS: dict[str, Kind] = {
    "name": STR,
    "description": STR,
    "instructions": STR,
    "instruction_budget": INT,
    "compactor": STR,
    "guardrail": STR,
    "policy_engine": STR,
    "order": sequence_of(str, "a list of part names"),
    "mcp": sequence_of(object, "a list of MCP servers (commands, URLs or tables of options)"),
    "middlewares": sequence_of(object, "a list of middlewares"),
    "tools": sequence_of(object, "a list of tools (functions or Tool values)"),
    "agents": sequence_of(Agent, "a list of agents"),
    **dict.fromkeys(
        ("parts", "tool_sources"),
        Kind(
            "a table of each plugin's options (a table, or None), such as {'NAME': {}}",
            lambda v: (
                isinstance(v, Mapping)
                and all(
                    isinstance(k, str) and (x is None or isinstance(x, Mapping))
                    for k, x in v.items()
                )
            ),
        ),
    ),
}


def check_kit_keys(options: Mapping[str, Any]) -> None:
    """Every key is a Kit option, and each value :data:`_KINDS` knows is of its kind."""
    unknown = sorted(set(options) - KIT_OPTIONS)
    if unknown:
        raise unknown_key(unknown[0], sorted(KIT_OPTIONS), "Kit(...)")
    check_kinds(options, _KINDS, "Kit")


async def kit_memory(options: Mapping[str, Any], manager: PluginManager) -> MemoryBlock:
    """The kit's memory block: ``open_memory_block(**options, manager=manager)``, checked."""
    if not isinstance(options, Mapping):
        raise ConfigError(
            f"memory= takes a table of options, such as {{'store': 'file:///srv/memory', "
            f"'scopes': ['user', 'project']}}; got {options!r}",
            value=options,
            source="Kit(memory=)",
        )
    unknown = sorted(set(options) - MEMORY_OPTIONS)
    if unknown:
        raise unknown_key(unknown[0], sorted(MEMORY_OPTIONS), "Kit(memory=...)")
    if options.get("ground") is not None:  # checked before the store is opened
        check_k(options["ground"], "Kit(memory={'ground': ...})")
    block = {k: v for k, v in options.items() if k != "ground"}
    return await open_memory_block(**block, manager=manager)


def kit_grounder(options: Mapping[str, Any], block: MemoryBlock) -> MemoryGrounder | None:
    """``Kit(memory={..., "ground": k})``'s grounder: the block's memory and scopes, k best."""
    k = options.get("ground")
    return None if k is None else MemoryGrounder(block.memory, k, block.scopes)


#: The options of the kit's session.
SESSION_OPTIONS = ("session", "header", "session_id", "resume", "fork", "fork_at")


def check_session_options(options: Mapping[str, Any]) -> None:
    given = [name for name in SESSION_OPTIONS[1:] if options.get(name)]
    if given and options.get("session") is None:
        raise ConfigError(
            f"{', '.join(given)} need session= (the store the session is in)",
            value=given,
            source="Kit(...)",
        )
    if options.get("resume") and (options.get("fork") or options.get("session_id")):
        raise ConfigError(
            "resume= continues one session; it does not go with fork= or session_id= (which "
            "names a new session)",
            value=options["resume"],
            source="resume=",
        )
    if options.get("fork_at") and not options.get("fork"):
        raise ConfigError(
            "fork_at= names an item of the session fork= names; pass fork= too",
            value=options["fork_at"],
            source="fork_at=",
        )


def kit_hooks(manager: PluginManager, options: Mapping[str, Any]) -> Hooks:
    """The kit's hook chains: every plugin's hooks in plugin order, then the user's.

    A ``message_filter=`` is the last transform, checked (:func:`checked_filter`).
    """
    user = {name: options[name] for name in FIELDS if options.get(name) is not None}
    hooks = plugin_hooks(manager)
    if user:  # else no second set of chains to build (and merge) for every kit
        hooks = hooks.merged(Hooks.of("user", **user))
    if options.get("message_filter") is not None:
        if not callable(options["message_filter"]):
            raise ConfigError(
                f"message_filter= takes a function of the messages, such as "
                f"agentkit_core.drop_app_only; got {options['message_filter']!r}",
                value=options["message_filter"],
                source="Kit(message_filter=)",
            )
        filtered = checked_filter(options["message_filter"])
        hooks = hooks.merged(Hooks.of("message_filter", transform=filtered))
    return hooks


def kit_middlewares(options: Mapping[str, Any], manager: PluginManager) -> tuple[Middleware, ...]:
    """The kit's middlewares: compaction, then the user's own.

    The guardrail's ``egress()`` is the agent's, from :func:`kit_guardrail`.
    """
    chain: list[Middleware] = []
    if options.get("compactor"):
        from ._compaction import compaction

        compactor = get_compactor(
            options["compactor"],
            manager=manager,
            **plugin_options(options.get("compactor_options"), "compactor_options"),
        )
        chain.append(compaction(compactor))
    from ._middleware import as_middleware

    chain.extend(as_middleware(m) for m in options.get("middlewares") or ())
    return tuple(chain)


def kit_compaction(spec: Any, manager: PluginManager) -> Folding | None:
    """The kit's fold: ``Folding(**spec)`` (a model string resolved on ``manager``), or None."""
    if spec is None or isinstance(spec, Folding):
        return spec
    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"compaction= takes the options of the fold as a table, such as "
            f"{{'budget': 60000}}, or a Folding; got {spec!r}",
            value=spec,
            source="Kit(compaction=)",
        )
    allowed = sorted(inspect.signature(Folding).parameters)
    unknown = sorted(set(spec) - set(allowed))
    if unknown or "budget" not in spec:
        what = f"unknown key(s) {', '.join(unknown)}" if unknown else "no budget"
        raise ConfigError(
            f"compaction= has {what}; its keys are {', '.join(allowed)} (budget is required)",
            value=unknown or spec,
            source="Kit(compaction=)",
        )
    if isinstance(spec.get("model"), str):
        spec = {**spec, "model": resolve_model(spec["model"], manager=manager)}
    return Folding(**spec)


def plugin_options(value: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    """One plugin's options as given; ``manager`` is refused, since the kit passes its own.

    They are a table (or None): a list or a string is refused, not read as pairs.
    """
    if value is not None and not isinstance(value, Mapping):
        raise ConfigError(
            f"{where} takes a table of the plugin's options, such as {{'key': value}}; got "
            f"{value!r}",
            value=value,
            source=where,
        )
    options = dict(value or {})
    if "manager" in options:
        raise ConfigError(
            f"{where} names 'manager', which is not a plugin option: the kit looks every plugin "
            "up on its own manager and hands it to the factories that declare one; pass "
            "Kit(manager=pm) instead",
            value=options["manager"],
            source=where,
        )
    return options


def kit_guards(options: Mapping[str, Any], manager: PluginManager) -> GuardChain | None:
    """The kit's guard chain from ``guards=``, ``guard_options=`` and ``guard_fail_open=``.

    None when ``guards=`` names none; see :func:`build_guard_chain`.
    """
    guards = _guard_names(options.get("guards"), "guards")
    fail_open = _guard_names(options.get("guard_fail_open"), "guard_fail_open")
    guard_options = options.get("guard_options") or {}
    if not isinstance(guard_options, Mapping):
        raise ConfigError(
            f"guard_options= takes a table of each guard's options, such as {{'redact': "
            f"{{'kinds': ['email']}}}}; got {guard_options!r}",
            value=guard_options,
            source="Kit(guard_options=)",
        )
    if not guards:
        for key in ("guard_options", "guard_fail_open"):
            if options.get(key):
                raise ConfigError(
                    f"{key}= needs guards= naming the guards it configures",
                    value=options[key],
                    source=f"Kit({key}=)",
                )
        return None
    # the items are build_guard_chain's to check: an unknown name lists the installed guards
    return build_guard_chain(
        cast("list[str | Guard]", list(guards)),
        options={
            name: plugin_options(opts, f"guard_options[{name!r}]")
            for name, opts in guard_options.items()
        },
        fail_open=cast("Sequence[str]", fail_open),
        manager=manager,
    )


def _guard_names(value: object, key: str) -> Sequence[object]:
    """``guards=`` or ``guard_fail_open=``: a list, never a string or a table read as its keys.

    ``guards={"max-output": {"max_chars": 100}}`` would build the guard without its options,
    and ``guard_fail_open={"redact": False}`` would let redact fail open.
    """
    if isinstance(value, str):
        raise ConfigError(
            f"{key}= takes a list of guards, such as ['redact']; got the string {value!r}",
            value=value,
            source=f"Kit({key}=)",
        )
    if isinstance(value, Mapping):
        raise ConfigError(
            f"{key}= takes a list of guards, such as ['redact']; got the table {value!r} (a "
            "guard's options go in guard_options=)",
            value=value,
            source=f"Kit({key}=)",
        )
    if value is not None and not isinstance(value, Sequence):
        raise ConfigError(
            f"{key}= takes a list of guards, such as ['redact']; got {value!r}",
            value=value,
            source=f"Kit({key}=)",
        )
    return value or ()


def kit_guardrail(options: Mapping[str, Any], manager: PluginManager) -> Guardrail | None:
    """The kit's guardrail: ``guardrail=``, or the one the configuration names.

    A name is built with ``guardrail_options`` over its configured settings.
    """
    guardrail = options.get("guardrail")
    extra = plugin_options(options.get("guardrail_options"), "guardrail_options")
    for key in ("name", "environ"):  # get_guardrail's own: they would not reach the guardrail
        if key in extra:
            raise ConfigError(
                f"guardrail_options names {key!r}, which is not a setting of the guardrail; its "
                "settings are its [guardrail.NAME] table, its environment variables and these "
                "options",
                value=extra[key],
                source="Kit(guardrail_options=...)",
            )
    if extra and not isinstance(guardrail, str):
        raise ConfigError(
            f"guardrail_options={extra!r} need a guardrail by name (guardrail='web', say); "
            f"got guardrail={guardrail!r}",
            value=extra,
            source="Kit(guardrail_options=...)",
        )
    if isinstance(guardrail, str):
        return get_guardrail(guardrail, manager=manager, **extra)
    return resolve_guardrail(guardrail, manager=manager)
