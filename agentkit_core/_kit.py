"""The Kit: installed plugins and explicit options assembled into a plain AgentConfig.

Construction (:meth:`Kit.open`, or ``Kit(...)`` when nothing needs connecting) does everything
that can fail (discovery, validation, reading files, connecting tool sources) and reports it
once; a construction that fails half-way closes what it opened. :meth:`Kit.config` is then
pure. Every field the kit sets is one a user could set by hand with the same exported calls;
``docs/manual.md`` names them, and the tests hold the two paths to each other.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from collections.abc import Iterable
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
from ._errors import ConfigError
from ._errors import GuardBlocked
from ._errors import ToolSourceError
from ._executor import Executor
from ._executor import resolve_executor
from ._fold import Folding
from ._guardrails import Guardrail
from ._guards import Guard
from ._guards import GuardChain
from ._guards import build_guard_chain
from ._guards import guard_error
from ._hooks import FIELDS
from ._hooks import Hooks
from ._instructions import InstructionPart
from ._instructions import LiveInstructions
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
from ._lookup import resolve_policy
from ._memory_block import MEMORY_OPTIONS
from ._memory_block import MemoryBlock
from ._memory_block import MemoryManifest
from ._memory_block import MemoryOptions
from ._messages import Message
from ._middleware import Middleware
from ._middleware import MiddlewareLike
from ._models import Model
from ._models import ModelRequest
from ._models import ModelSettings
from ._plugins import PluginManager
from ._policy import Grant
from ._policy import Grantor
from ._policy import GrantReport
from ._policy import PolicyEngine
from ._recorder import NULL_RECORDER
from ._recorder import Recorder
from ._requests import WorkingContext
from ._sessions import SessionHeader
from ._sessions import Sessions
from ._sessions import SessionStore
from ._sessions import _as_header
from ._settings import check_settings
from ._tables import check_count
from ._tables import unknown_key
from ._tools import Tool
from ._tools import ToolResult
from ._toolunion import USER_TOOLS
from ._toolunion import CompositeToolSource
from ._toolunion import ToolConflict
from ._toolunion import ToolFilter
from ._toolunion import ToolOrigin
from ._toolunion import ToolSourceBridge
from ._toolunion import ToolUnion
from ._toolunion import ToolWrap
from ._verdicts import VerdictObserver
from ._verdicts import report_verdict
from .hookspecs import HookFunction
from .hookspecs import ToolVerdict

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - exercised on 3.10 only
    from exceptiongroup import ExceptionGroup  # type: ignore[import-not-found]
    from typing_extensions import Unpack

if TYPE_CHECKING:
    from ._agent import Agent

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
    description: str
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
    guards: Sequence[str | Guard]
    guard_options: Mapping[str, PluginOptions | None]
    guard_fail_open: Sequence[str]
    executor: Executor | str | None
    executor_options: PluginOptions | None
    policy: PolicyEngine | str | os.PathLike[str] | None
    policy_engine: str | None
    middlewares: Sequence[MiddlewareLike]
    max_turns: int
    max_parallel_tools: int
    settings: ModelSettings | None
    manager: PluginManager | None
    session: str | Sessions | SessionStore | None
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


@dataclass(frozen=True)
class AgentConfig:
    """Everything an Agent is built from; ``Agent.from_config(config)`` builds one.

    A plain value: every field can be set by hand (see ``docs/manual.md``). ``manager`` is the
    plugin manager the agent's own lookups run on (an ``output=`` type given to
    ``from_config``); the kit sets its own, so an agent it assembled never reaches another.
    """

    name: str = "agent"
    #: What the agent does, for whoever composes it (a parent's model, an MCP client).
    description: str = ""
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
    #: Told every verdict a run reports (policy, guards, approvals, hooks' folds).
    verdict_observer: VerdictObserver | None = None
    #: The policy engine deciding every tool call before the hooks; None: no policy.
    policy: PolicyEngine | None = None
    #: The request settings of every model call (a run's own ``settings=`` go over them).
    settings: ModelSettings = field(default_factory=lambda: ModelSettings())
    #: How many tool calls of one batch run at once.
    max_parallel_tools: int = 8
    #: The guards checking each request, answer and turn (``docs/guards.md``); None: none.
    guards: GuardChain | None = None
    #: Runs each model call and tool call of a run as a step (``docs/durable.md``); None: the
    #: in-process executor.
    executor: Executor | None = None


class Kit:
    """Assembles an AgentConfig from the installed plugins and explicit options.

    Args:
        name: the agent's name (``AgentConfig.name``).
        description: what the agent does (``AgentConfig.description``), for a parent's model
            when it is a child agent, or an MCP client when it is served.
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
        tools: the user's own tools or typed functions (the ``tools`` source, first in the
            union).
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
        guards, guard_options, guard_fail_open: the guards checking every instruction part,
            request, answer and turn: installed guards by name (``["redact", "max-input"]``),
            run in plugin order and built with ``guard_options[name]``, then the product's own
            :class:`Guard` objects in the order given; ``guard_fail_open`` names the guards
            whose raising lets the text through instead of blocking (see ``docs/guards.md``).
            A guard that blocks an instruction part is a :class:`ConfigError` here.
        executor, executor_options: what runs each model call and tool call of a run: an
            :class:`Executor`, or an executor by name (``"in-process"``, the default, or an
            installed one such as ``"dbos"``) built with ``executor_options``; an unknown name
            or option is an error here (see ``docs/durable.md``).
        policy, policy_engine: the policy engine that decides every tool call (a
            :class:`PolicyEngine`), or the path of a policy file read by the installed engine
            (``policy_engine=`` names it when several are installed); see ``docs/policy.md``.
            ``kit.policy`` is the engine, for a front's ``deferred`` and ``release``. A kit
            that continues a session grants again what the session's skill reads granted
            (``kit.regranted`` says what was and was not).
        middlewares: the user's own middlewares, after the kit's.
        max_turns: model calls a run may make (``AgentConfig.max_turns``).
        max_parallel_tools: tool calls of one batch run at once (default 8).
        settings: the :class:`ModelSettings` of every model request (``temperature``,
            ``max_tokens``...); a run's own ``settings=`` go over them key by key.
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
        verdict_observer: ``fn(verdict)``, told every :class:`Verdict` a run reports (the
            policy's, the guards', approvals, the hooks' folds) after it was recorded.
    """

    def __init__(self, **options: Unpack[KitOptions]) -> None:
        self._start_lifecycle()
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
        kit._start_lifecycle()
        try:
            _check_keys(options)
            memory = options.get("memory")
            if memory is not None:
                manager = manager_or_default(options.get("manager"))
                kit._memory = await kit_memory(memory, manager)
                kit._opened.append(_Opened("memory", kit._memory))
            kit._setup(options)
            for name, opts in kit._pending_sources.items():
                for source in await kit._make_source(name, opts):
                    await source.list_tools()  # connects: a server that fails, fails here
                    parts = (
                        source.sources() if isinstance(source, CompositeToolSource) else [source]
                    )
                    kit._union_sources.extend((part.label, part) for part in parts)
                    if isinstance(source, ToolSourceBridge):  # each server closed on its own
                        kit._opened.extend(_Opened(p.label, source, p.label) for p in parts)
            kit._union = await ToolUnion.create(kit._union_sources, **kit._union_options)
            if options.get("session") is not None:
                kit._recorder = await kit._open_session()
                kit.regrant(kit._recorder)
        except BaseException as exc:
            try:
                await kit.aclose()
            except Exception as closing:  # the construction's own error is the one to raise
                if hasattr(exc, "add_note"):
                    exc.add_note(f"closing what the kit had opened failed too: {closing!r}")
            raise
        return kit

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Unpack[KitOptions]) -> Kit:
        """A kit from a TOML file's kit options; keyword overrides win.

        The options are the ``[kit]`` table of an ``agentkit.toml``, or ``[tool.agentkit.kit]``
        of a ``pyproject.toml``; the whole file is checked. Without ``manager=``, the kit's
        plugin manager reads its configuration from the same file (``load``, ``disable``...,
        the ``[guardrail.NAME]`` settings and the ``[models.PREFIX]`` options), so one file
        configures the kit.
        """
        options = read_kit_options(path)
        if "manager" not in overrides:
            overrides["manager"] = PluginManager(config=path)
        return cls(**{**options, **overrides})

    # ------------------------------------------------------------------ construction

    def _start_lifecycle(self) -> None:
        #: What the kit opened, in the order it connected: closed concurrently, newest first.
        self._opened: list[_Opened] = []
        #: What holds opened parts (a bridge): closed after them.
        self._containers: list[Any] = []
        #: add_mcp dials in flight, cancelled by a close.
        self._dials: set[asyncio.Future[str]] = set()
        self._mcp: ToolSourceBridge | None = None
        self._mcp_lock = asyncio.Lock()
        self._closed = False
        self._memory: MemoryBlock | None = None
        self._union = ToolUnion([])  # until construction builds the kit's own
        self._recorder: Recorder = NULL_RECORDER  # aclose() flushes it, even after a failed _setup

    async def _make_source(self, name: str, options: Mapping[str, Any]) -> list[Any]:
        """The tool sources the plugin ``name`` makes, tracked to be closed with the kit."""
        made = get_tool_source(name, manager=self._manager, **options)
        if inspect.isawaitable(made):
            made = await made
        sources = list(made) if isinstance(made, list | tuple) else [made]
        for source in sources:
            if isinstance(source, ToolSourceBridge):
                self._containers.append(source)
                if name == MCP and self._mcp is None:
                    self._mcp = source
            else:
                self._opened.append(_Opened(getattr(source, "label", name), source))
        return sources

    def _setup(self, options: KitOptions) -> None:
        _check_keys(options)
        self._options = options.copy()
        manager = options.get("manager")
        self._manager: PluginManager = manager_or_default(manager)
        self._model = resolve_model(options.get("model"), manager=self._manager)
        self._sources = self._part_sources(options)
        self._guards = kit_guards(options, self._manager)
        try:
            self._live = LiveInstructions(
                self._sources,
                order=options.get("order"),
                budget=options.get("instruction_budget"),
                guard=None if self._guards is None else self._guards.check_part,
            )
        except GuardBlocked as exc:
            raise guard_error(exc, "Kit(guards=...)") from exc
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
        if self._live.live_sources:
            first = Hooks.of("instructions", before_model_call=self._live.before_model_call)
            self._hooks = first.merged(self._hooks)
        self._middlewares = kit_middlewares(options, self._manager)
        self._compaction = kit_compaction(options.get("compaction"), self._manager)
        self._sessions: Sessions | None = None
        _check_session_options(options)
        self._guardrail = kit_guardrail(options, self._manager)
        self._policy = resolve_policy(
            options.get("policy"), engine=options.get("policy_engine"), manager=self._manager
        )
        self.regranted: list[GrantReport] = []
        self._settings = check_settings(options.get("settings"), "Kit(settings=)")
        self._executor = (
            None
            if options.get("executor") is None and options.get("executor_options") is None
            else resolve_executor(
                options.get("executor"),
                options.get("executor_options"),
                manager=self._manager,
                source="Kit(executor=)",
            )
        )
        self._max_parallel = check_count(
            options.get("max_parallel_tools", 8), "Kit(max_parallel_tools=)"
        )

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
        from ._agent import _as_tool
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
            description=self._options.get("description", ""),
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
            verdict_observer=self._options.get("verdict_observer"),
            policy=self._policy,
            settings=self._settings.copy(),
            max_parallel_tools=self._max_parallel,
            guards=self._guards,
            executor=self._executor,
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

    @property
    def policy(self) -> PolicyEngine | None:
        """The policy engine (None without ``policy=``): ``deferred``, ``release``, ``would``."""
        return self._policy

    def regrant(self, recorder: Recorder) -> list[GrantReport]:
        """Grant again what ``recorder``'s session says its conversation's skill reads granted.

        For a conversation resumed after a restart: a grant is made again only when what
        granted it (a skill) is unchanged and still trusted; a changed one is reported (a
        ``deny`` grant verdict, recorded and shown to the verdict observer), not granted.
        :meth:`open` does it for the kit's own session and :meth:`recorder_for` for each
        conversation it opens. Returns the reports (also added to ``kit.regranted``).
        """
        state = recorder.state
        if self._policy is None or not state.grants:
            return []
        grantors = [s for s in self._sources if isinstance(s, Grantor)]

        def current(source: str) -> Grant | None:
            for grantor in grantors:
                found = grantor.current_grant(source)
                if found is not None:
                    return found
            return None

        reports = self._policy.regrant(state.grants, current, scope=recorder.session_id)
        observer = self._options.get("verdict_observer")
        for report in reports:
            if report.verdict is not None:
                report_verdict(report.verdict, recorder=recorder, observer=observer)
        self.regranted.extend(reports)
        return reports

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
        """A digest of what the kit assembles: model, parts, tools, hooks, middlewares, settings."""
        live = {src.source for src in self._live.live_sources}
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
            "settings": self._settings,
            "max_parallel_tools": self._max_parallel,
            "guards": [] if self._guards is None else self._guards.names,
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
        recorder = await Recorder.open(
            self._sessions, session_id, self.header(), parts=self.parts_for
        )
        self.regrant(recorder)
        return recorder

    async def _open_session(self) -> Recorder:
        options = self._options
        given = options.get("session")
        assert given is not None  # _open_session runs only with session=
        if isinstance(given, str):
            sessions = await Sessions.open(given, manager=self._manager)
            self._opened.append(_Opened(f"session store {sessions!r}", sessions))
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

    # ------------------------------------------------------------------ MCP servers at run time

    async def add_mcp(self, server: str | Mapping[str, Any], **options: Any) -> str:
        """Connect one more MCP server; its tools are offered from the next turn on.

        ``server`` is a command line, an ``http(s)://`` URL or a mapping, as in ``mcp=``;
        ``options`` are the bridge's per-server options (``prefix=``, ``tool_filter=``,
        ``env=`` with agentkit-mcp-client). Every run off the kit's configs, those handed out
        already included, is offered the server's tools from its next turn; a turn under way
        keeps the tools it was offered. Returns the server's label (``mcp:#<n> <program>``),
        which :meth:`remove_mcp`, ``tool_filter`` and :meth:`tools` use.

        The dial runs beside everything else (two servers added at once dial at once). When it
        ends, the server's tools are checked against what the kit offers then: a name taken
        already is a :class:`ToolConflictError` and the server is closed (add it again with a
        ``prefix=``). A close of the kit cancels a dial in flight, and its ``add_mcp`` raises
        :class:`ToolSourceError`; so does one on a closed kit.
        """
        bridge = await self._mcp_bridge(server)
        dial = asyncio.ensure_future(bridge.add(server, **options))
        self._dials.add(dial)
        try:
            label = await dial
        except asyncio.CancelledError:
            if self._closed and dial.cancelled() and not _cancelling():
                raise self._closed_error("was connecting") from None
            raise
        finally:
            self._dials.discard(dial)
        opened = _Opened(label, bridge, label)
        self._opened.append(opened)
        try:
            if self._closed:  # it connected as the kit closed
                raise self._closed_error("had just connected")
            part = next(p for p in bridge.sources() if p.label == label)
            await self._union.join(label, part)
            if self._closed:  # the kit closed while the server's tools were checked
                raise self._closed_error("was being checked")
        except BaseException:
            self._union.remove(label)
            if opened in self._opened:
                self._opened.remove(opened)
                await opened.close()
            raise
        return label

    async def remove_mcp(self, label: str) -> None:
        """Stop offering an MCP server's tools from the next turn on, and close the server.

        ``label`` is one :meth:`add_mcp` returned, or the label of a server ``mcp=`` (or
        ``tool_sources={"mcp": ...}``) connected. The server leaves the union at once, then is
        closed: calls in flight to it end with a :class:`ToolSourceError` the model sees as the
        call's result, within seconds, without waiting for them.
        """
        opened = next((o for o in self._opened if o.part == label and o.part), None)
        if opened is None:
            known = [o.part for o in self._opened if o.part]
            raise ConfigError(
                f"the kit has no MCP server labelled {label!r}; its servers: "
                f"{', '.join(known) or 'none'}",
                value=label,
                source="Kit.remove_mcp",
            )
        self._opened.remove(opened)
        self._union.remove(label)
        await opened.close()

    async def _mcp_bridge(self, server: Any) -> ToolSourceBridge:
        """The kit's MCP bridge: the one ``mcp=`` made, else one made now with its options."""
        if self._closed:
            raise self._closed_error("was about to connect")
        async with self._mcp_lock:
            if self._mcp is None:
                options = dict(self._pending_sources.get(MCP) or {})
                options.pop("servers", None)
                await self._make_source(MCP, options)
                if self._mcp is None:
                    raise ConfigError(
                        f"the installed {MCP!r} tool source cannot add servers at run time (it "
                        "is no ToolSourceBridge: add, remove, sources, aclose)",
                        value=server,
                        source="Kit.add_mcp",
                    )
        return self._mcp

    @staticmethod
    def _closed_error(what: str) -> ToolSourceError:
        return ToolSourceError(
            f"the MCP server add_mcp() was adding {what} when the kit closed, so it was not "
            "added and nothing of it is left running; add servers to an open kit"
        )

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        """Close what the kit opened; safe to call twice.

        The session's last batch is written first. Then every MCP server (those ``mcp=``
        connected and those :meth:`add_mcp` added), the session store and any other source
        are closed at once: a server's calls in flight end with a :class:`ToolSourceError`,
        and a dial :meth:`add_mcp` has in flight is cancelled. Their tools leave the union
        first, so a config handed out before keeps working, offering what is still open.
        What failed is raised as one :class:`ExceptionGroup`, its errors in reverse order of
        connection (the flush's first).
        """
        if self._closed:
            return
        self._closed = True
        errors: list[Exception] = []
        try:
            await self._recorder.flush()
        except Exception as exc:  # keep closing the others
            errors.append(exc)
        dials = list(self._dials)
        for dial in dials:
            dial.cancel()
        opened, self._opened = self._opened, []
        for o in opened:  # a part goes by its label, a plain source by the one it is offered under
            self._union.remove(o.part or o.name)
        for source in self._containers:
            if isinstance(source, CompositeToolSource):
                for part in source.sources():
                    self._union.remove(part.label)
        await asyncio.gather(*dials, return_exceptions=True)
        results = await asyncio.gather(*(o.close() for o in opened), return_exceptions=True)
        errors.extend(_failures(reversed(results)))
        containers, self._containers = self._containers, []
        results = await asyncio.gather(
            *(c.aclose() for c in reversed(containers)), return_exceptions=True
        )
        errors.extend(_failures(results))
        if errors:
            raise ExceptionGroup(
                f"closing the kit: {len(errors)} error{'s' if len(errors) > 1 else ''}", errors
            )

    close = aclose

    async def __aenter__(self) -> Kit:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


#: The tool source the kit adds MCP servers to (``mcp=``, ``add_mcp``).
MCP = "mcp"


@dataclass(eq=False)
class _Opened:
    """One thing the kit opened: a source or store it closes, or one part of a bridge."""

    name: str
    holder: Any
    #: The label of the bridge's part this is (closed by ``holder.remove(part)``), or "".
    part: str = ""

    async def close(self) -> None:
        if not self.part:
            await self.holder.aclose()
        elif any(p.label == self.part for p in self.holder.sources()):
            await self.holder.remove(self.part)


def _failures(results: Iterable[Any]) -> list[Exception]:
    """The errors among ``gather(..., return_exceptions=True)`` results.

    A cancellation is raised, not collected.
    """
    errors = []
    for result in results:
        if isinstance(result, Exception):
            errors.append(result)
        elif isinstance(result, BaseException):
            raise result
    return errors


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled (not something it waited on)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if cancelling is not None else False


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


def kit_guards(
    options: Mapping[str, Any], manager: PluginManager | None = None
) -> GuardChain | None:
    """The kit's guard chain from ``guards=``, ``guard_options=`` and ``guard_fail_open=``.

    None when ``guards=`` names none; see :func:`build_guard_chain`.
    """
    guards = options.get("guards") or ()
    if isinstance(guards, str):
        raise ConfigError(
            f"guards= takes a list of guards, such as ['redact']; got the string {guards!r}",
            value=guards,
            source="Kit(guards=)",
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
    return build_guard_chain(
        list(guards),
        options={
            name: plugin_options(opts, f"guard_options[{name!r}]")
            for name, opts in (options.get("guard_options") or {}).items()
        },
        fail_open=options.get("guard_fail_open") or (),
        manager=manager,
    )


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
