"""The Kit: installed plugins and explicit options assembled into a plain AgentConfig.

Construction (:meth:`Kit.open`, or ``Kit(...)`` when nothing needs connecting) does everything
that can fail (discovery, validation, reading files, connecting tool sources) and reports it
once; a construction that fails half-way closes what it opened. :meth:`Kit.config` is then
pure. Every field the kit sets is one a user could set by hand with the same exported calls;
``docs/manual.md`` names them, and the tests hold the two paths to each other.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from ._config import KIT_OPTIONS
from ._config import read_kit_options
from ._config import unknown_key
from ._errors import ConfigError
from ._hooks import FIELDS
from ._hooks import Hooks
from ._instructions import InstructionPart
from ._instructions import Instructions
from ._instructions import Omission
from ._instructions import PartSource
from ._instructions import ReloadablePartSource
from ._instructions import TextPart
from ._instructions import compose_instructions
from ._lookup import get_compactor
from ._lookup import get_guardrail
from ._lookup import get_instruction_part
from ._lookup import get_tool_source
from ._lookup import manager_or_default
from ._lookup import resolve_guardrail
from ._lookup import resolve_model
from ._middleware import Middleware
from ._plugins import PluginManager
from ._toolunion import CompositeToolSource
from ._toolunion import ToolOrigin
from ._toolunion import ToolUnion

if TYPE_CHECKING:
    from ._guardrails import Guardrail
    from ._models import Model
    from ._tools import Tool

#: The label of the user's own tools in the union.
USER_TOOLS = "tools"


@dataclass(frozen=True)
class AgentConfig:
    """Everything an Agent is built from; ``Agent.from_config(config)`` builds one.

    A plain value: every field can be set by hand (see ``docs/manual.md``).
    """

    name: str = "agent"
    model: Model | str | None = None
    instructions: str = ""
    tools: ToolUnion | Sequence[Tool] = ()
    hooks: Hooks = field(default_factory=Hooks)
    middlewares: tuple[Middleware, ...] = ()
    max_turns: int = 10
    #: The run's guardrail; None means the one the configuration names, if any.
    guardrail: Guardrail | None = None


class Kit:
    """Assembles an AgentConfig from the installed plugins and explicit options.

    Args:
        model: a Model or a model string (``"openai:gpt-4o-mini"``), resolved at construction
            on ``manager``; None reads ``AGENTKIT_MODEL`` and, unset, is a ConfigError.
        instructions: the product's own prompt (the ``product`` part).
        parts: options per plugin-provided instruction part, e.g.
            ``{"agentsmd": {"path": "."}, "skills": {"dirs": ["skills"]}}``; a part is
            configured exactly when it is named here.
        order: the join order of the parts, every configured part exactly once.
        instruction_budget: bytes the joined instructions may take.
        tools: the user's own tools (the ``tools`` source, first in the union).
        agents: child agents offered as tools, each its own source ``agent:#<n> <name>``.
        tool_sources: options per plugin-provided tool source, e.g.
            ``{"mcp": {"servers": ["mcp-server-time"]}}``, connected at construction.
        mcp: MCP servers (command lines or URLs), short for ``tool_sources={"mcp": ...}``;
            each server is its own source, labelled ``mcp:#<n> <program>``.
        tool_filter, tool_wrap, on_tool_conflict: see :class:`ToolUnion`.
        compactor, compactor_options: a compactor plugin by name, run as ``compaction()``.
        guardrail, guardrail_options: the run's guardrail: a Guardrail, or an installed one by
            name built with ``guardrail_options`` over its configured settings (the file's
            ``[guardrail.NAME]``, then its environment variables); None takes the one the
            configuration names. The agent checks every tool call with it.
        middlewares: the user's own middlewares, after the kit's.
        before_model_call ... transform: the user's own hooks (a function or a list of them),
            called after the plugins' hooks for each field.
        manager: the plugin manager (default: the process-wide one).
    """

    def __init__(self, **options: Any) -> None:
        self._opened: list[Any] = []
        self._closed = False
        self._setup(options)
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
    async def open(cls, **options: Any) -> Kit:
        """Build a kit, connecting its tool sources; a failure closes what was opened."""
        kit = cls.__new__(cls)
        kit._opened = []
        kit._closed = False
        try:
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
        except BaseException:
            await kit.aclose()
            raise
        return kit

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> Kit:
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

    def _setup(self, options: dict[str, Any]) -> None:
        unknown = sorted(set(options) - set(KIT_OPTIONS))
        if unknown:
            raise unknown_key(unknown[0], KIT_OPTIONS, "Kit(...)")
        self._options = dict(options)
        manager = options.get("manager")
        self._manager: PluginManager = manager_or_default(manager)
        self._model = resolve_model(options.get("model"), manager=self._manager)
        self._sources = self._part_sources(options)
        self._instructions: Instructions = compose_instructions(
            self._sources, order=options.get("order"), budget=options.get("instruction_budget")
        )
        self._union_sources = self._tool_sources(options)
        self._union_options: dict[str, Any] = {
            "tool_filter": options.get("tool_filter"),
            "tool_wrap": options.get("tool_wrap"),
            "on_conflict": options.get("on_tool_conflict"),
        }
        self._pending_sources: dict[str, dict[str, Any]] = dict(options.get("tool_sources") or {})
        if options.get("mcp"):
            mcp = dict(self._pending_sources.get("mcp") or {})
            mcp["servers"] = [*mcp.get("servers", ()), *options["mcp"]]
            self._pending_sources["mcp"] = mcp
        self._hooks = kit_hooks(self._manager, options)
        self._middlewares = kit_middlewares(options, self._manager)
        self._guardrail = kit_guardrail(options, self._manager)

    def _part_sources(self, options: Mapping[str, Any]) -> list[PartSource]:
        sources: list[PartSource] = []
        if options.get("instructions"):
            sources.append(TextPart(options["instructions"]))
        for name, opts in (options.get("parts") or {}).items():
            sources.append(get_instruction_part(name, manager=self._manager, **(opts or {})))
        return sources

    def _tool_sources(self, options: Mapping[str, Any]) -> list[Any]:
        from ._agent_tool import agent_tool

        sources: list[Any] = [(USER_TOOLS, list(options.get("tools") or ()))]
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
            instructions=self._instructions.text,
            tools=self._union,
            hooks=self._hooks,
            middlewares=self._middlewares,
            max_turns=self._options.get("max_turns", 10),
            guardrail=self._guardrail,
        )

    def parts(self) -> list[InstructionPart]:
        """The instruction parts as sent, in join order."""
        return list(self._instructions.parts)

    def omitted(self) -> list[Omission]:
        """Everything a layer considered for the instructions and left out."""
        return list(self._instructions.omissions)

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
        self._instructions = compose_instructions(
            self._sources,
            order=self._options.get("order"),
            budget=self._options.get("instruction_budget"),
        )

    # ------------------------------------------------------------------ lifecycle

    async def aclose(self) -> None:
        """Close what the kit opened, newest first; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        errors: list[BaseException] = []
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


def kit_hooks(manager: PluginManager, options: Mapping[str, Any]) -> Hooks:
    """The kit's hook chains: every plugin's hooks in plugin order, then the user's."""
    user = {name: options[name] for name in FIELDS if options.get(name) is not None}
    return Hooks.from_plugins(manager).merged(Hooks.of("user", **user))


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
            options["compactor"], manager=manager, **(options.get("compactor_options") or {})
        )
        chain.append(compaction(compactor))
    from ._middleware import as_middleware

    chain.extend(as_middleware(m) for m in options.get("middlewares") or ())
    return tuple(chain)


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
