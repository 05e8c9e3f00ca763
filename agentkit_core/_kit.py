"""The Kit: installed plugins and explicit options assembled into a plain AgentConfig.

Construction (:meth:`Kit.open`, or ``Kit(...)`` when nothing needs connecting) does everything
that can fail (discovery, validation, reading files, connecting tool sources) and reports it
once; a construction that fails half-way closes what it opened. :meth:`Kit.config` is then
pure. Every field the kit sets is one a user could set by hand with the same exported calls;
``docs/manual.md`` names them, and the tests hold the two paths to each other.
"""

from __future__ import annotations

import inspect
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

from ._errors import ConfigError
from ._fold import Folding
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
from ._lookup import plugin_hooks
from ._lookup import resolve_model
from ._messages import Message
from ._middleware import Middleware
from ._middleware import MiddlewareLike
from ._models import ModelRequest
from ._plugins import PluginManager
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
    from ._models import Model
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
        compactor, compactor_options: a compactor plugin by name, run as ``compaction()`` on
            every request.
        guardrail, guardrail_options: a guardrail plugin by name, run as ``egress()``.
        middlewares: the user's own middlewares, after the kit's.
        max_turns: model calls a run may make (``AgentConfig.max_turns``).
        before_model_call ... transform: the user's own hooks (a function or a list of them),
            called after the plugins' hooks for each field.
        manager: the plugin manager (default: the process-wide one).
    """

    def __init__(self, **options: Unpack[KitOptions]) -> None:
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
    async def open(cls, **options: Unpack[KitOptions]) -> Kit:
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
    def from_file(cls, path: str | Path, **overrides: Unpack[KitOptions]) -> Kit:
        """A kit from a TOML file's kit options; keyword overrides win.

        The options are the ``[kit]`` table of an ``agentkit.toml``, or ``[tool.agentkit.kit]``
        of a ``pyproject.toml``.
        """
        return cls(**{**read_kit_options(path), **overrides})

    # ------------------------------------------------------------------ construction

    def _setup(self, options: KitOptions) -> None:
        unknown = sorted(set(options) - KIT_OPTIONS)
        if unknown:
            raise ConfigError(
                f"unknown Kit option(s) {', '.join(unknown)}; the options are "
                f"{', '.join(sorted(KIT_OPTIONS))}",
                value=unknown,
                source="Kit(...)",
            )
        self._options = options.copy()
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
        self._pending_sources: dict[str, dict[str, Any]] = {
            name: plugin_options(opts, f"tool_sources[{name!r}]")
            for name, opts in (options.get("tool_sources") or {}).items()
        }
        if options.get("mcp"):
            mcp = dict(self._pending_sources.get("mcp") or {})
            mcp["servers"] = [*mcp.get("servers", ()), *options["mcp"]]
            self._pending_sources["mcp"] = mcp
        self._hooks = kit_hooks(self._manager, options)
        self._middlewares = kit_middlewares(options, self._manager)
        self._compaction = kit_compaction(options.get("compaction"), self._manager)

    def _part_sources(self, options: Mapping[str, Any]) -> list[PartSource]:
        sources: list[PartSource] = []
        if options.get("instructions"):
            sources.append(TextPart(options["instructions"]))
        for name, opts in (options.get("parts") or {}).items():
            opts = plugin_options(opts, f"parts[{name!r}]")
            sources.append(get_instruction_part(name, manager=self._manager, **opts))
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
            compaction=self._compaction,
            manager=self._manager,
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
    return plugin_hooks(manager).merged(Hooks.of("user", **user))


def kit_middlewares(
    options: Mapping[str, Any], manager: PluginManager | None = None
) -> tuple[Middleware, ...]:
    """The kit's middlewares: compaction, then egress, then the user's own."""
    chain: list[Middleware] = []
    if options.get("compactor"):
        from ._compaction import compaction

        compactor = get_compactor(
            options["compactor"],
            manager=manager,
            **plugin_options(options.get("compactor_options"), "compactor_options"),
        )
        chain.append(compaction(compactor))
    if options.get("guardrail"):
        from ._guardrails import egress

        guardrail = get_guardrail(
            options["guardrail"],
            manager=manager,
            **plugin_options(options.get("guardrail_options"), "guardrail_options"),
        )
        chain.append(egress(guardrail))
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


def read_kit_options(path: str | Path) -> dict[str, Any]:
    """The kit options in a TOML file: ``[kit]``, or ``[tool.agentkit.kit]`` in pyproject."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found]
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read kit options from {p}: {exc}", source=str(p)) from exc
    table = (
        data.get("tool", {}).get("agentkit", {}).get("kit")
        if p.name == "pyproject.toml"
        else data.get("kit")
    )
    if not isinstance(table, dict):
        where = "[tool.agentkit.kit]" if p.name == "pyproject.toml" else "[kit]"
        raise ConfigError(f"{p} has no {where} table of kit options", source=str(p))
    return table
