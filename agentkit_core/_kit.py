"""The Kit: installed plugins and explicit options assembled into a plain AgentConfig.

Construction (:meth:`Kit.open`, or ``Kit(...)`` when nothing needs connecting) does everything
that can fail (discovery, validation, reading files, connecting tool sources) and reports it
once; a construction that fails half-way closes what it opened. :meth:`Kit.config` is then
pure. Every field the kit sets is one a user could set by hand with the same exported calls;
``docs/manual.md`` names them, and the tests hold the two paths to each other.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeAlias
from typing import TypedDict
from typing import TypeVar

from ._config import read_kit_options
from ._config import unknown_key
from ._errors import ConfigError
from ._fold import Folding
from ._hooks import FIELDS
from ._hooks import Hooks
from ._instructions import InstructionPart
from ._instructions import LiveInstructions
from ._instructions import LivePartSource
from ._instructions import Omission
from ._instructions import PartSource
from ._instructions import ReloadablePartSource
from ._instructions import TextPart
from ._lookup import get_compactor
from ._lookup import get_guardrail
from ._lookup import get_instruction_part
from ._lookup import get_tool_source
from ._lookup import manager_or_default
from ._lookup import plugin_hooks
from ._lookup import resolve_guardrail
from ._lookup import resolve_model
from ._memory_block import MEMORY_OPTIONS
from ._memory_block import MemoryBlock
from ._memory_block import MemoryManifest
from ._memory_block import MemoryOptions
from ._messages import Message
from ._middleware import Middleware
from ._middleware import MiddlewareLike
from ._models import ModelRequest
from ._plugins import PluginManager
from ._recorder import NULL_RECORDER
from ._recorder import Recorder
from ._sessions import SessionHeader
from ._sessions import Sessions
from ._sessions import SessionStore
from ._sessions import _as_header
from ._tools import ToolResult
from ._toolunion import CompositeToolSource
from ._toolunion import ToolConflict
from ._toolunion import ToolFilter
from ._toolunion import ToolOrigin
from ._toolunion import ToolUnion
from ._toolunion import ToolWrap
from .hookspecs import HookFunction
from .hookspecs import Verdict

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - exercised on 3.10 only
    from typing_extensions import Unpack

if TYPE_CHECKING:
    from ._agent import Agent
    from ._guardrails import Guardrail
    from ._models import Model
    from ._requests import WorkingContext
    from ._tools import Tool

#: The label of the user's own tools in the union.
USER_TOOLS = "tools"

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
    ``guardrail_options``) are the keywords of the plugin's factory, typed there.
    """

    model: Model | str | None
    name: str
    instructions: str
    parts: Mapping[str, PluginOptions | None]
    order: Sequence[str] | None
    instruction_budget: int | None
    memory: MemoryOptions | None
    tools: Sequence[Tool]
    agents: Sequence[Agent]
    tool_sources: Mapping[str, PluginOptions | None]
    mcp: Sequence[str]
    tool_filter: ToolFilter | None
    tool_wrap: ToolWrap | None
    on_tool_conflict: Callable[[ToolConflict], object] | None
    compaction: Mapping[str, Any] | Folding | None
    compactor: str | None
    compactor_options: PluginOptions | None
    guardrail: str | None
    guardrail_options: PluginOptions | None
    middlewares: Sequence[MiddlewareLike]
    max_turns: int
    manager: PluginManager | None
    session: str | Sessions | SessionStore | None
    header: SessionHeader | Mapping[str, Any] | None
    session_id: str | None
    resume: str | None
    fork: str | None
    fork_at: str | None
    before_model_call: Hook[ModelRequest]
    before_tool_call: Hook[Verdict]
    after_tool_call: Hook[ToolResult]
    output_guard: Hook[Message]
    should_stop_after_turn: Hook[str]
    before_turn: Hook[Sequence[Message]]
    transform: Hook[Sequence[Message]]


#: Every key KitOptions knows.
KIT_OPTIONS: frozenset[str] = frozenset(KitOptions.__optional_keys__)


@dataclass(frozen=True)
class AgentConfig:
    """Everything an Agent is built from; ``Agent.from_config(config)`` builds one.

    A plain value: every field can be set by hand (see ``docs/manual.md``). ``manager`` is the
    plugin manager the agent's own lookups run on (an ``output=`` type given to
    ``from_config``); the kit sets its own, so an agent it assembled never reaches another.
    """

    name: str = "agent"
    model: Model | str | None = None
    instructions: str = ""
    tools: ToolUnion | Sequence[Tool] = ()
    hooks: Hooks = field(default_factory=Hooks)
    middlewares: tuple[Middleware, ...] = ()
    max_turns: int = 10
    compaction: Folding | None = None
    manager: PluginManager | None = None
    recorder: Recorder = NULL_RECORDER
    #: The run's guardrail; None means the one the configuration names, if any.
    guardrail: Guardrail | None = None


class Kit:
    """Assembles an AgentConfig from the installed plugins and explicit options.

    Args:
        name: the agent's name (``AgentConfig.name``).
        model: a Model or a model string (``"openai:gpt-4o-mini"``), resolved at construction
            on ``manager``; None reads ``AGENTKIT_MODEL`` and, unset, is a ConfigError.
        instructions: the product's own prompt (the ``product`` part).
        parts: options per plugin-provided instruction part, e.g.
            ``{"agentsmd": {"path": "."}, "skills": {"dirs": ["skills"]}}``; a part is
            configured exactly when it is named here.
        order: the join order of the parts, every configured part exactly once.
        instruction_budget: bytes the joined instructions may take.
        memory: the memory block (needs :meth:`open`): ``{"store": URL, "scopes": ["user",
            "project"], "read_only": ["user"], "max_entry_bytes": 4096, "max_bytes": None}``,
            the ``memory`` group of parts, re-rendered before every model call, and its tools
            (see ``docs/memory.md``).
        tools: the user's own tools (the ``tools`` source, first in the union).
        agents: child agents offered as tools, each its own source ``agent:#<n> <name>``.
        tool_sources: options per plugin-provided tool source, e.g.
            ``{"mcp": {"servers": ["mcp-server-time"]}}``, connected at construction.
        mcp: MCP servers (command lines or URLs), short for ``tool_sources={"mcp": ...}``;
            each server is its own source, labelled ``mcp:#<n> <program>``.
        tool_filter, tool_wrap, on_tool_conflict: see :class:`ToolUnion`.
        compaction: the fold the transcript keeps: the keywords of :class:`Folding`
            (``{"budget": 60_000, "model": "openai:gpt-4o-mini"}``; a model string is resolved
            on ``manager``), or a Folding.
        compactor, compactor_options: a compactor plugin by name, run as ``compaction()``.
        guardrail, guardrail_options: the run's guardrail: a Guardrail, or an installed one by
            name built with ``guardrail_options`` over its configured settings (the file's
            ``[guardrail.NAME]``, then its environment variables); None takes the one the
            configuration names. The agent checks every tool call with it.
        middlewares: the user's own middlewares, after the kit's.
        max_turns: model calls a run may make (``AgentConfig.max_turns``).
        before_model_call ... transform: the user's own hooks (a function or a list of them),
            called after the plugins' hooks for each field.
        manager: the plugin manager (default: the process-wide one).
        session: a session store (a URL such as ``sqlite:///sessions.db``, a SessionStore or
            a Sessions) the kit records its conversation in: a new session, opened by
            :meth:`open`, whose recorder every config carries (``kit.recorder``).
        header: fields of the new session's header over the kit's own (cwd, model,
            fingerprints); a mapping, or a SessionHeader taken as it is.
        session_id: the session's id: continued at its leaf when it exists, else created.
        resume: an existing session to continue at its leaf instead of a new one.
        fork, fork_at: continue a new session based at item ``fork_at`` (default: the leaf)
            of session ``fork``; the original is left as it was.
    """

    def __init__(self, **options: Unpack[KitOptions]) -> None:
        self._opened: list[Any] = []
        self._closed = False
        self._memory: MemoryBlock | None = None
        self._recorder: Recorder = NULL_RECORDER
        self._setup(options)
        if self._options.get("memory") is not None:
            raise ConfigError(
                "memory= must be opened (its store is read before the first request): build "
                "the kit with 'await Kit.open(...)' (or 'async with Kit.open(...)') instead of "
                "Kit(...)",
                value=self._options["memory"],
                source="memory=",
            )
        if self._options.get("session") is not None:
            raise ConfigError(
                "session= must be opened: build the kit with 'await Kit.open(...)' (or "
                "'async with Kit.open(...)') instead of Kit(...)",
                value=self._options["session"],
                source="session=",
            )
        if self._pending_sources:
            names = ", ".join(self._pending_sources)
            raise ConfigError(
                f"tool sources {names} must be connected: build the kit with "
                "'await Kit.open(...)' (or 'async with Kit.open(...)') instead of Kit(...)",
                value=names,
                source="tool_sources=",
            )
        self._union = ToolUnion(self._union_sources, **self._union_options)
        self._union.check_fixed()

    @classmethod
    async def open(cls, **options: Unpack[KitOptions]) -> Kit:
        """Build a kit, connecting its tool sources; a failure closes what was opened."""
        kit = cls.__new__(cls)
        kit._opened = []
        kit._closed = False
        kit._memory = None
        kit._recorder = NULL_RECORDER  # aclose() flushes it, even after a failed _setup
        try:
            _check_keys(options)
            memory = options.get("memory")
            if memory is not None:
                manager = manager_or_default(options.get("manager"))
                kit._memory = await kit_memory(memory, manager)
                kit._opened.append(kit._memory)
            kit._setup(options)
            for name, opts in kit._pending_sources.items():
                made = get_tool_source(name, manager=kit._manager, **opts)
                if inspect.isawaitable(made):
                    made = await made
                for source in made if isinstance(made, list | tuple) else [made]:
                    kit._opened.append(source)
                    await source.list_tools()  # connects: a server that fails, fails here
                    parts = (
                        source.sources() if isinstance(source, CompositeToolSource) else [source]
                    )
                    kit._union_sources.extend((part.label, part) for part in parts)
            kit._union = await ToolUnion.create(kit._union_sources, **kit._union_options)
            if options.get("session") is not None:
                kit._recorder = await kit._open_session()
        except BaseException:
            await kit.aclose()
            raise
        return kit

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Unpack[KitOptions]) -> Kit:
        """A kit from a TOML file's kit options; keyword overrides win.

        The options are the ``[kit]`` table of an ``agentkit.toml``, or ``[tool.agentkit.kit]``
        of a ``pyproject.toml``; the whole file is checked. Without ``manager=``, the kit's
        plugin manager reads its configuration from the same file (``load``, ``disable``...,
        and the ``[guardrail.NAME]`` settings), so one file configures the kit.
        """
        options = read_kit_options(path)
        if "manager" not in overrides:
            overrides["manager"] = PluginManager(config=path)
        return cls(**{**options, **overrides})

    # ------------------------------------------------------------------ construction

    def _setup(self, options: KitOptions) -> None:
        _check_keys(options)
        self._options = options.copy()
        manager = options.get("manager")
        self._manager: PluginManager = manager_or_default(manager)
        self._model = resolve_model(options.get("model"), manager=self._manager)
        self._sources = self._part_sources(options)
        self._live = LiveInstructions(
            self._sources, order=options.get("order"), budget=options.get("instruction_budget")
        )
        self._union_sources = self._tool_sources(options)
        self._union_options: dict[str, Any] = {
            "tool_filter": options.get("tool_filter"),
            "tool_wrap": options.get("tool_wrap"),
            "on_conflict": options.get("on_tool_conflict"),
        }
        self._pending_sources: dict[str, dict[str, Any]] = {
            name: plugin_options(opts, f"tool_sources[{name!r}]")
            for name, opts in (options.get("tool_sources") or {}).items()
        }
        if options.get("mcp"):
            mcp = dict(self._pending_sources.get("mcp") or {})
            mcp["servers"] = [*mcp.get("servers", ()), *options["mcp"]]
            self._pending_sources["mcp"] = mcp
        self._hooks = kit_hooks(self._manager, options)
        if any(isinstance(src, LivePartSource) for src in self._sources):
            first = Hooks.of("instructions", before_model_call=self._live.before_model_call)
            self._hooks = first.merged(self._hooks)
        self._middlewares = kit_middlewares(options, self._manager)
        self._compaction = kit_compaction(options.get("compaction"), self._manager)
        self._sessions: Sessions | None = None
        _check_session_options(options)
        self._guardrail = kit_guardrail(options, self._manager)

    def _part_sources(self, options: Mapping[str, Any]) -> list[PartSource]:
        sources: list[PartSource] = []
        if options.get("instructions"):
            sources.append(TextPart(options["instructions"]))
        for name, opts in (options.get("parts") or {}).items():
            opts = plugin_options(opts, f"parts[{name!r}]")
            sources.append(get_instruction_part(name, manager=self._manager, **opts))
        if self._memory is not None:
            sources.append(self._memory)
        return sources

    def _tool_sources(self, options: Mapping[str, Any]) -> list[Any]:
        from ._agent import _as_tool  # typed functions become tools, as Agent(tools=) takes them
        from ._agent_tool import agent_tool

        sources: list[Any] = [(USER_TOOLS, [_as_tool(t) for t in options.get("tools") or ()])]
        for n, child in enumerate(options.get("agents") or (), start=1):
            sources.append((f"agent:#{n} {child.name}", [agent_tool(child)]))
        for src in self._sources:
            if src.tools:
                sources.append((src.source, list(src.tools)))
        return sources

    # ------------------------------------------------------------------ the results

    def config(self) -> AgentConfig:
        """The assembled configuration: pure, the same value every call."""
        return AgentConfig(
            name=self._options.get("name", "agent"),
            model=self._model,
            instructions=self._live.text,
            tools=self._union,
            hooks=self._hooks,
            middlewares=self._middlewares,
            max_turns=self._options.get("max_turns", 10),
            compaction=self._compaction,
            manager=self._manager,
            recorder=self._recorder,
            guardrail=self._guardrail,
        )

    def parts(self) -> list[InstructionPart]:
        """The instruction parts as last composed, in join order.

        With memory, the composition of whichever request was sent last (each run composes
        its own before every model call).
        """
        return list(self._live.current.parts)

    def omitted(self) -> list[Omission]:
        """Everything a layer considered for the instructions and left out (as :meth:`parts`)."""
        return list(self._live.current.omissions)

    def parts_for(self, text: str) -> tuple[list[InstructionPart], list[Omission]] | None:
        """The parts and omissions ``text`` was joined from, if it is one of the kit's renders.

        A recorder (``Recorder(parts=kit.parts_for)``) records a request's instructions as
        these parts; for text a hook rewrote, or another agent's, it is None.
        """
        return self._live.parts_for(text)

    @property
    def memory(self) -> MemoryBlock | None:
        """The memory block (``memory=``), or None."""
        return self._memory

    def memory_manifest(self) -> MemoryManifest:
        """What the last render of the memory block showed, with the hash that says if it moved.

        Of whichever run rendered last; empty without ``memory=``.
        """
        return MemoryManifest() if self._memory is None else self._memory.manifest

    def tools(self) -> list[ToolOrigin]:
        """Each tool of the union with the label of its source, as of the last listing."""
        return self._union.origins()

    def reload_parts(self) -> None:
        """Re-render the instruction parts (after a skills directory changed, say).

        Sources that can discover again (``reload()``) do; on any error the parts in force
        stay as they were.
        """
        for src in self._sources:
            if isinstance(src, ReloadablePartSource):
                src.reload()
        self._live.recompose()

    # ------------------------------------------------------------------ sessions

    @property
    def recorder(self) -> Recorder:
        """The recorder of the kit's session (a NullRecorder without ``session=``)."""
        return self._recorder

    @property
    def session_id(self) -> str:
        """The id of the kit's session, or ``""`` without one."""
        return self._recorder.session_id

    def working_context(self) -> WorkingContext:
        """A WorkingContext that continues the kit's conversation at its session's leaf.

        The transcript and the instructions as recorded, without reasoning another model
        produced; empty without a session. Pass it as ``agent.run(task, wc=...)``.
        """
        return self._recorder.working_context(self._model.name)

    def header(self) -> SessionHeader:
        """The header the kit's sessions start with: cwd, model, fingerprints, ``header=``."""
        given = self._options.get("header")
        if isinstance(given, SessionHeader):
            return given
        own = {
            "cwd": os.getcwd(),
            "model": self._model.name,
            "kit_fingerprint": self.fingerprint(),
            "plugin_fingerprint": self._manager.fingerprint(),
        }
        return _as_header({**own, **dict(given or {})})

    def fingerprint(self) -> str:
        """A digest of what the kit assembles: model, parts, tools, hooks, middlewares."""
        live = {src.source for src in self._sources if isinstance(src, LivePartSource)}
        described = {
            "name": self._options.get("name", "agent"),
            "model": self._model.name,
            "parts": [  # a live part (memory) by its name: its text moves while the kit runs
                [p.id, p.source, hashlib.sha256(p.text.encode()).hexdigest()]
                for p in self._live.current.parts
                if p.source not in live
            ]
            + [[src.id, src.source, "live"] for src in self._sources if src.source in live],
            "tools": [[o.name, o.source] for o in self._union.origins()],
            "hooks": {name: [src for src, _ in getattr(self._hooks, name)] for name in FIELDS},
            "middlewares": [type(m).__qualname__ for m in self._middlewares],
            "max_turns": self._options.get("max_turns", 10),
        }
        text = json.dumps(described, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    async def recorder_for(self, session_id: str) -> Recorder:
        """A recorder of another conversation in the kit's store, with the kit's header/parts.

        The session ``session_id`` is continued at its leaf, or created. For a front serving
        many conversations: put it on each run's context (``ctx.recorder``).
        """
        if self._sessions is None:
            raise ConfigError(
                "recorder_for() needs the kit's session store: build the kit with "
                "Kit.open(session=URL)",
                value=session_id,
                source="Kit.recorder_for",
            )
        return await Recorder.open(self._sessions, session_id, self.header(), parts=self.parts_for)

    async def _open_session(self) -> Recorder:
        options = self._options
        given = options.get("session")
        assert given is not None  # _open_session runs only with session=
        if isinstance(given, str):
            sessions = await Sessions.open(given, manager=self._manager)
            self._opened.append(sessions)
        else:
            sessions = given if isinstance(given, Sessions) else Sessions(given)
        self._sessions = sessions
        header, parts = self.header(), self.parts_for
        resume, fork, session_id = (
            options.get("resume"),
            options.get("fork"),
            options.get("session_id"),
        )
        if resume:
            return await Recorder.resume(sessions, resume, header=header, parts=parts)
        if fork:
            return await Recorder.fork(
                sessions,
                fork,
                at=options.get("fork_at"),
                header=header,
                new_id=options.get("session_id") or "",
                parts=parts,
            )
        if session_id:
            return await Recorder.open(sessions, session_id, header, parts=parts)
        return await Recorder.start(sessions, header, parts=parts)

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        """Close what the kit opened, newest first; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        errors: list[BaseException] = []
        try:
            await self._recorder.flush()
        except Exception as exc:  # keep closing the others
            errors.append(exc)
        for source in reversed(self._opened):
            try:
                await source.aclose()
            except Exception as exc:  # keep closing the others
                errors.append(exc)
        self._opened = []
        if errors:
            raise errors[0]

    close = aclose

    async def __aenter__(self) -> Kit:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _check_keys(options: Mapping[str, Any]) -> None:
    unknown = sorted(set(options) - KIT_OPTIONS)
    if unknown:
        raise unknown_key(unknown[0], sorted(KIT_OPTIONS), "Kit(...)")


async def kit_memory(options: Mapping[str, Any], manager: PluginManager) -> MemoryBlock:
    """The kit's memory block: ``MemoryBlock.open(**options, manager=manager)``, checked."""
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
    return await MemoryBlock.open(**options, manager=manager)


#: The options of the kit's session.
SESSION_OPTIONS = ("session", "header", "session_id", "resume", "fork", "fork_at")


def _check_session_options(options: Mapping[str, Any]) -> None:
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
    """The kit's hook chains: every plugin's hooks in plugin order, then the user's."""
    user = {name: options[name] for name in FIELDS if options.get(name) is not None}
    return plugin_hooks(manager).merged(Hooks.of("user", **user))


def kit_middlewares(
    options: Mapping[str, Any], manager: PluginManager | None = None
) -> tuple[Middleware, ...]:
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


def kit_compaction(spec: Any, manager: PluginManager | None = None) -> Folding | None:
    """The kit's fold: ``Folding(**spec, manager=manager)``, a Folding as given, or None."""
    if spec is None or isinstance(spec, Folding):
        return spec
    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"compaction= takes the options of the fold as a table, such as "
            f"{{'budget': 60000}}, or a Folding; got {spec!r}",
            value=spec,
            source="Kit(compaction=)",
        )
    allowed = sorted(set(inspect.signature(Folding).parameters) - {"manager"})
    unknown = sorted(set(spec) - set(allowed))
    if unknown or "budget" not in spec:
        what = f"unknown key(s) {', '.join(unknown)}" if unknown else "no budget"
        raise ConfigError(
            f"compaction= has {what}; its keys are {', '.join(allowed)} (budget is required)",
            value=unknown or spec,
            source="Kit(compaction=)",
        )
    return Folding(**spec, manager=manager)


def plugin_options(value: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    """One plugin's options as given; ``manager`` is refused, since the kit passes its own."""
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


def kit_guardrail(
    options: Mapping[str, Any], manager: PluginManager | None = None
) -> Guardrail | None:
    """The kit's guardrail: ``guardrail=``, or the one the configuration names.

    A name is built with ``guardrail_options`` over its configured settings.
    """
    guardrail = options.get("guardrail")
    extra = options.get("guardrail_options") or {}
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
