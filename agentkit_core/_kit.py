"""The Kit: installed plugins and explicit options assembled into a plain AgentConfig.

Construction (:meth:`Kit.open`, or ``Kit(...)`` when nothing needs connecting) does everything
that can fail (discovery, validation, reading files, connecting tool sources) and reports it
once; a construction that fails half-way closes what it opened. :meth:`Kit.config` is then
pure. Every field the kit sets is one a user could set by hand with the same exported calls;
``docs/manual.md`` names them, and the tests hold the two paths to each other.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Unpack

from ._config import read_kit_options
from ._errors import ConfigError
from ._errors import GuardBlocked
from ._executor import Executor
from ._executor import resolve_executor
from ._fold import Folding
from ._guard_chain import GuardChain
from ._guard_chain import guard_error
from ._guardrails import Guardrail
from ._handoff import HANDOFFS
from ._handoff import handoff_tools
from ._hooks import FIELDS
from ._hooks import Hooks
from ._instructions import InstructionPart
from ._instructions import LiveInstructions
from ._instructions import Omission
from ._instructions import PartSource
from ._instructions import ReloadablePartSource
from ._instructions import TextPart
from ._kit_lifecycle import KitLifecycle
from ._kit_lifecycle import Opened
from ._kit_options import KitOptions
from ._kit_options import check_kit_keys
from ._kit_options import check_session_options
from ._kit_options import kit_compaction
from ._kit_options import kit_grounder
from ._kit_options import kit_guardrail
from ._kit_options import kit_guards
from ._kit_options import kit_hooks
from ._kit_options import kit_memory
from ._kit_options import kit_middlewares
from ._kit_options import kit_options
from ._kit_options import plugin_options
from ._lookup import get_instruction_part
from ._lookup import open_sessions
from ._lookup import resolve_model
from ._lookup import resolve_policy
from ._memory_block import MemoryBlock
from ._memory_block import MemoryManifest
from ._memory_ground import MemoryGrounder
from ._middleware import Middleware
from ._models import Model
from ._models import ModelSettings
from ._plugins import PluginManager
from ._plugins import manager_or_default
from ._policy import Grant
from ._policy import Grantor
from ._policy import GrantReport
from ._policy import PolicyEngine
from ._recorder import NULL_RECORDER
from ._recorder import PartsFor
from ._recorder import Recorder
from ._requests import WorkingContext
from ._sessions import SessionHeader
from ._sessions import Sessions
from ._sessions import _as_header
from ._settings import check_settings
from ._tables import check_count
from ._tables import wrong_kind
from ._tools import Tool
from ._tools import as_tool
from ._toolunion import USER_TOOLS
from ._toolunion import CompositeToolSource
from ._toolunion import ToolOrigin
from ._toolunion import ToolSourceBridge
from ._toolunion import ToolUnion
from ._verdicts import VerdictObserver
from ._verdicts import report_verdict


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
    model: Model | str | Sequence[Model | str] | None = None
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
    #: Grounds each run on the memory entries best matching its task (``memory={"ground": k}``).
    memory: MemoryGrounder | None = None


class Kit(KitLifecycle):
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
            (see ``docs/memory.md``); ``"ground": k`` also grounds each run on the k entries
            best matching its task (:class:`MemoryGrounder`).
        tools: the user's own tools or typed functions (the ``tools`` source, first in the
            union).
        agents: child agents offered as tools, each its own source ``agent:#<n> <name>``.
        handoffs: kits the conversation may be handed to, each offered to the model as a
            ``transfer_to_<name>`` tool (source ``handoff``): taking it goes on with the run
            under that kit's config, over the same transcript and session
            (``docs/kit.md``, "Handoffs"). :meth:`add_handoffs` adds kits built later (a
            kit that hands back).
        tool_sources: options per plugin-provided tool source, e.g.
            ``{"mcp": {"servers": ["mcp-server-time"]}}``, connected at construction.
        mcp: MCP servers (command lines or URLs), short for ``tool_sources={"mcp": ...}``;
            each server is its own source, labelled ``mcp:#<n> <program>``.
        tool_filter, tool_wrap, on_tool_conflict: see :class:`ToolUnion`.
        deferred_tools: ``fn(kit)``, called once the kit has opened its session and built its
            policy engine (``kit.session_id``, ``kit.recorder``, ``kit.policy`` are there;
            ``kit.config()`` is not yet): the tools it returns join ``tools=``'s.
        message_filter: ``fn(messages) -> messages``, what of the conversation each model call
            is sent (``drop_app_only`` leaves out the messages marked app-only); the messages
            stay in the transcript and the session. A filter that drops a call's result, its
            call or the last user message is refused (:class:`HookError`).
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
        limits: a :class:`~agentkit_core.options.Limits`; a kit reads its ``max_turns`` and
            ``max_parallel_tools`` (the two flat keywords are thin aliases that build it).
            Likewise ``tools=`` takes a :class:`~agentkit_core.options.ToolOptions` (every
            tool option above), ``compaction=`` a
            :class:`~agentkit_core.options.CompactionOptions` (``compaction``, ``compactor``,
            ``compactor_options``), ``guards=`` a :class:`~agentkit_core.options.GuardOptions`
            (the guards, guardrail and policy options and ``verdict_observer``) and
            ``session=`` a :class:`~agentkit_core.options.SessionOptions` (the session
            options below); their flat keywords are thin aliases, and a record beside one of
            its own flat keywords is a ConfigError.
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
        self._add_deferred_tools()  # no session to wait for: Kit(...) opens none
        self._union = ToolUnion(self._union_sources, **self._union_options)
        self._union.check_fixed()

    @classmethod
    async def open(cls, **options: Unpack[KitOptions]) -> Kit:
        """Build a kit, connecting its tool sources; a failure closes what was opened."""
        kit = cls.__new__(cls)
        kit._start_lifecycle()
        try:
            options = kit_options(options)  # type: ignore[assignment]
            check_kit_keys(options)
            memory = options.get("memory")
            if memory is not None:
                manager = manager_or_default(options.get("manager"))
                kit._memory = await kit_memory(memory, manager)
                kit._opened.append(Opened("memory", kit._memory))
                kit._grounder = kit_grounder(memory, kit._memory)
            kit._setup(options)
            for name, opts in kit._pending_sources.items():
                for source in await kit._make_source(name, opts):
                    await source.list_tools()  # connects: a server that fails, fails here
                    parts = (
                        source.sources() if isinstance(source, CompositeToolSource) else [source]
                    )
                    kit._union_sources.extend((part.label, part) for part in parts)
                    if isinstance(source, ToolSourceBridge):  # each server closed on its own
                        kit._opened.extend(Opened(p.label, source, p.label) for p in parts)
            kit._union = await ToolUnion.create(kit._union_sources, **kit._union_options)
            if options.get("session") is not None:
                kit._recorder = await kit._open_session()
                kit.regrant(kit._recorder)
            if kit._add_deferred_tools():  # the union again, checked with them
                kit._union = await ToolUnion.create(kit._union_sources, **kit._union_options)
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
        configures the kit. A :class:`ConfigError` building it (a plugin refusing its options
        from the file, say) ends by naming the file.
        """
        options = read_kit_options(path)
        overrides = kit_options(overrides)  # type: ignore[assignment]  # a record beats the file
        if "manager" not in overrides:
            overrides["manager"] = PluginManager(config=path)
        try:
            return cls(**{**options, **overrides})
        except ConfigError as exc:
            if type(exc) is not ConfigError:
                raise
            raise ConfigError(
                f"{exc} (building the kit read from {os.fspath(path)})",
                value=exc.value,
                source=exc.source,
            ) from exc

    # ------------------------------------------------------------------ construction

    def _setup(self, options: KitOptions) -> None:
        options = kit_options(options)  # type: ignore[assignment]
        check_kit_keys(options)
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
        check_session_options(options)
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

    def _add_deferred_tools(self) -> bool:
        """Add ``deferred_tools=``'s tools to ``tools=``'s: once, with session and policy built.

        The session's header was written before: its kit fingerprint leaves them out.
        """
        fn = self._options.get("deferred_tools")
        if fn is None:
            return False
        try:
            made = fn(self)
        except Exception as exc:
            name = getattr(fn, "__qualname__", repr(fn))
            raise ConfigError(
                f"deferred_tools= function {name} raised {type(exc).__name__}: {exc}",
                value=fn,
                source="Kit(deferred_tools=)",
            ) from exc
        label, tools = self._union_sources[0]  # tools='s, always first (_tool_sources)
        self._union_sources[0] = (label, [*tools, *(as_tool(t) for t in made or ())])
        return True

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
        from ._agent_tool import agent_tool

        sources: list[Any] = [(USER_TOOLS, [as_tool(t) for t in options.get("tools") or ()])]
        for n, child in enumerate(options.get("agents") or (), start=1):
            sources.append((f"agent:#{n} {child.name}", [agent_tool(child)]))
        handoffs = options.get("handoffs") or ()
        if not isinstance(handoffs, Sequence) or not all(isinstance(k, Kit) for k in handoffs):
            raise wrong_kind("Kit(handoffs=)", "a list of kits", handoffs)
        self._handoffs: list[Kit] = list(handoffs)
        if self._handoffs:
            sources.append((HANDOFFS, handoff_tools(self._handoffs, self.name)))
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
            memory=self._grounder,
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

    @staticmethod
    def parts_from(*kits: Kit) -> PartsFor:
        """The parts function of a recorder several kits share: the first kit that rendered.

        ``Recorder.start(store, parts=Kit.parts_from(triage, billing))``; each kit's handoff
        targets are asked too, so one session records each agent's instructions as its own
        parts. Text no kit rendered gets None, and is recorded as a string.
        """

        def parts(text: str) -> tuple[list[InstructionPart], list[Omission]] | None:
            for kit in _reachable(kits):
                found = kit.parts_for(text)
                if found is not None:
                    return found
            return None

        return parts

    def add_handoffs(self, *kits: Kit) -> None:
        """Offer handoffs to ``kits`` too, from the next turn on.

        For a kit that hands back: ``handoffs=`` names kits built before this one, so the
        second of two kits that hand to each other is added here. The names are checked as
        ``handoffs=``'s are, and against the tools the kit offers.
        """
        tools = handoff_tools([*self._handoffs, *kits], self.name)
        offered = {o.name for o in self._union.origins() if o.source != HANDOFFS}
        clash = sorted(offered.intersection(t.name for t in tools))
        if clash:
            raise ConfigError(
                f"kit {self.name!r} already offers a tool named {clash[0]!r}; the handoff "
                "would take its name: rename the tool or the agent",
                value=clash[0],
                source="Kit.add_handoffs",
            )
        self._handoffs.extend(kits)
        self._union.remove(HANDOFFS)
        self._union.add(HANDOFFS, tools)

    @property
    def name(self) -> str:
        """The agent's name (``name=``)."""
        return self._options.get("name", "agent")

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
    def sessions(self) -> Sessions | None:
        """The kit's session store (``session=``), for a front that keeps records beside it."""
        return self._sessions

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

    async def recorder_for(self, session_id: str, *, create: bool = True) -> Recorder:
        """A recorder of another conversation in the kit's store, with the kit's header/parts.

        The session ``session_id`` is continued at its leaf, or created (with ``create=False``
        a missing one is a :class:`SessionNotFound`, for a front that only reads). For a front
        serving many conversations: put it on each run's context (``ctx.recorder``).
        """
        if self._sessions is None:
            raise ConfigError(
                "recorder_for() needs the kit's session store: build the kit with "
                "Kit.open(session=URL)",
                value=session_id,
                source="Kit.recorder_for",
            )
        opener = Recorder.open if create else Recorder.resume
        recorder = await opener(
            self._sessions, session_id, header=self.header(), parts=self.parts_from(self)
        )
        self.regrant(recorder)
        return recorder

    async def _open_session(self) -> Recorder:
        options = self._options
        given = options.get("session")
        assert given is not None  # _open_session runs only with session=
        if isinstance(given, str):
            sessions = await open_sessions(given, manager=self._manager)
            self._opened.append(Opened(f"session store {sessions!r}", sessions))
        else:
            sessions = given if isinstance(given, Sessions) else Sessions(given)  # type: ignore[arg-type]  # records were spread
        self._sessions = sessions
        header, parts = self.header(), self.parts_from(self)  # its handoffs' parts too
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

    async def __aenter__(self) -> Kit:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _reachable(kits: Sequence[Kit]) -> list[Kit]:
    """``kits`` and every kit their handoffs reach, each once, breadth first."""
    found: list[Kit] = []
    frontier = list(kits)
    while frontier:
        kit = frontier.pop(0)
        if all(kit is not k for k in found):
            found.append(kit)
            frontier.extend(kit._handoffs)
    return found
