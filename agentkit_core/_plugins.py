"""The plugin manager: discovery, one deterministic order, and the registries of every seam.

Discovery order (install order, ``sys.path``, directory order, hash seed) must never change a
result, so the manager never relies on pluggy's own loader or call order. It reads the entry
points itself, sorts the plugins (``before``/``after`` constraints, then priority, then name),
and registers them with pluggy in reverse, because pluggy calls the last registered first: the
result is that pluggy's call order is exactly the resolved order.

Loading goes in stages, each of which can leave a plugin out with a recorded status: the user's
allow/deny lists (``disabled``), one winner per entry-point name (``shadowed``), the declared
``agentkit-core`` range read from the distribution's metadata before any of its code is imported
(``incompatible``), import and registration (``failed``), and two plugins claiming one name on
one seam (``conflict``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import os
import warnings
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import field
from types import FunctionType
from types import MethodType
from types import ModuleType
from typing import Any
from typing import cast

import pluggy

from . import hookspecs
from ._config import PluginConfig
from ._config import load_plugin_config
from ._config import read_plugin_config
from ._config import strict_from_env
from ._discovery import PluginInfo
from ._discovery import PluginInterrupted
from ._discovery import candidate_key
from ._discovery import check_core_range
from ._discovery import discover_dir
from ._discovery import discover_entry_points
from ._discovery import import_plugin
from ._discovery import mark_shadowed
from ._discovery import normalize
from ._errors import ConfigError
from ._errors import PluginConflictError
from ._errors import PluginLoadError
from ._errors import UnknownNameError
from ._hookfields import FIELD_OF_HOOK
from ._hookfields import declared_arguments
from ._ordering import read_declarations
from ._ordering import resolve_order
from ._records import record

#: Seam name -> the registration hook that fills it.
SEAMS: dict[str, str] = {
    "compactors": "agentkit_register_compactors",
    "schema_adapters": "agentkit_register_schema_adapters",
    "checkpoint_stores": "agentkit_register_checkpoint_stores",
    "session_stores": "agentkit_register_session_stores",
    "memory_stores": "agentkit_register_memory_stores",
    "mcp_token_stores": "agentkit_register_mcp_token_stores",
    "guardrails": "agentkit_register_guardrails",
    "tool_sources": "agentkit_register_tool_sources",
    "models": "agentkit_register_models",
    "instruction_parts": "agentkit_register_instruction_parts",
    "policy_engines": "agentkit_register_policy_engines",
    "span_exporters": "agentkit_register_span_exporters",
    "guards": "agentkit_register_guards",
    "executors": "agentkit_register_executors",
    "prices": "agentkit_register_prices",
    "servers": "agentkit_register_servers",
}
_SEAM_OF_HOOK = {hook: seam for seam, hook in SEAMS.items()}
COMMANDS_HOOK = "agentkit_register_commands"

#: The contested-field hooks, in the order the docs list them.
CONTESTED_HOOKS: tuple[str, ...] = (
    "agentkit_before_model_call",
    "agentkit_before_tool_call",
    "agentkit_after_tool_call",
    "agentkit_output_guard",
    "agentkit_should_stop_after_turn",
    "agentkit_before_turn",
    "agentkit_transform",
)

#: The statuses ``agentkit plugins check`` and strict mode treat as errors.
BAD_STATUSES = ("failed", "incompatible", "conflict")


@record(slots=True)
class Registration:
    """One thing a plugin registered on a seam: its name, the value(s), and who offered it."""

    seam: str
    name: str
    value: Any
    plugin: str
    distribution: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


#: What pluggy can take as a hook implementation; any other value it skips.
_HOOKABLE = (FunctionType, MethodType, staticmethod, classmethod)


class _Pluggy(pluggy.PluginManager):
    """pluggy's manager, reading a module's own values without ``inspect.getattr_static``.

    pluggy looks every name of a plugin (and of the hookspecs) up statically, so a property
    never runs; on a module that is its ``__dict__`` entry, and the lookup cost ~15 µs a name
    (~5 ms of a first run). A module's plain values (classes, constants, imports) are skipped
    and its functions' markers read as pluggy reads them; anything else goes through pluggy.
    """

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        if _pluggy_looks(plugin, name):
            return super().parse_hookimpl_opts(plugin, name)
        opts = _marker(plugin, name, self.project_name + "_impl")
        return cast("pluggy.HookimplOpts | None", opts)

    def parse_hookspec_opts(
        self, module_or_class: ModuleType | type, name: str
    ) -> pluggy.HookspecOpts | None:
        if _pluggy_looks(module_or_class, name):
            return super().parse_hookspec_opts(module_or_class, name)
        opts = _marker(module_or_class, name, self.project_name + "_spec")
        return cast("pluggy.HookspecOpts | None", opts)


def _pluggy_looks(obj: object, name: str) -> bool:
    """Whether pluggy looks ``name`` up: anything but a module's own plain value or function."""
    if not isinstance(obj, ModuleType) or name not in obj.__dict__:
        return True
    value = obj.__dict__[name]
    return isinstance(value, _HOOKABLE) and not isinstance(value, FunctionType)


def _marker(module: object, name: str, marker: str) -> dict[str, object] | None:
    """A module's function's marker options, read as pluggy reads them; None for a plain value."""
    value = vars(module)[name]
    opts = getattr(value, marker, None) if isinstance(value, FunctionType) else None
    return opts if isinstance(opts, dict) else None


class PluginManager:
    """Discovers plugins, orders them, registers them with pluggy and keeps the seam registries.

    Build one with :func:`get_plugin_manager` (process-wide, lazily) or directly for a fresh,
    isolated manager (tests). Nothing is discovered until :meth:`load` runs. With
    ``entry_points=True`` the user's configuration (``[tool.agentkit]``, ``AGENTKIT_*``) is read
    unless ``config`` is given; ``path`` limits entry-point discovery to those directories.
    """

    def __init__(
        self,
        *,
        entry_points: bool = True,
        plugins: Iterable[object] = (),
        strict: bool | None = None,
        config: PluginConfig | str | os.PathLike[str] | None = None,
        path: Sequence[str] | None = None,
    ) -> None:
        self._use_entry_points = entry_points
        self._extra: list[tuple[str, object]] = [(_plugin_name(p), p) for p in plugins]
        self._strict_arg = strict
        self._config_arg = config
        self._path = list(path) if path is not None else None
        self.config = PluginConfig()
        self.strict = bool(strict)
        self.pm = _Pluggy(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.infos: list[PluginInfo] = []
        #: Problems that left nothing out but deserve a word (names matching nothing...).
        self.warnings: list[str] = []
        self._registry: dict[str, list[Registration]] = {s: [] for s in SEAMS}
        self._loaded = False

    # ------------------------------------------------------------------ public surface

    @property
    def hook(self) -> pluggy.HookRelay:
        """Pluggy's hook relay; its call order is the resolved plugin order."""
        self.load()
        return self.pm.hook

    def register(self, plugin: object, name: str | None = None) -> None:
        """Add a plugin object or module in code, without packaging it; re-resolves the order."""
        self._extra.append((name or _plugin_name(plugin), plugin))
        if self._loaded:
            self._loaded = False
            self.load()

    def load(self) -> PluginManager:
        """Discover, order and register every plugin (once; later calls are free).

        Interrupted (Ctrl-C while a plugin is imported), it leaves nothing half-loaded and
        raises the KeyboardInterrupt; the next call starts again.
        """
        if self._loaded:
            return self
        self._loaded = True
        try:
            self._load()
        except KeyboardInterrupt:
            for plugin in list(self.pm.get_plugins()):
                self.pm.unregister(plugin)
            self.infos, self.warnings = [], []
            self._registry = {s: [] for s in SEAMS}
            self._loaded = False
            raise
        return self

    def _load(self) -> None:
        for info in self.infos:
            if info.obj is not None and self.pm.is_registered(info.obj):
                self.pm.unregister(info.obj)
        self.infos, self.warnings = [], []
        self._registry = {s: [] for s in SEAMS}
        self.config = self._resolve_config()
        env_strict = self.config.strict
        self.strict = bool(self._strict_arg if self._strict_arg is not None else env_strict)

        candidates = [self._info_in_code(name, obj) for name, obj in self._extra]
        if self.config.plugins_dir is not None:
            candidates.extend(discover_dir(self.config.plugins_dir))
        if self._use_entry_points:
            candidates.extend(discover_entry_points(self._path))
        candidates.sort(key=candidate_key)
        self._apply_lists(candidates)
        mark_shadowed(candidates)
        for info in candidates:
            if info.status == "loaded":
                check_core_range(info)
            if info.status == "loaded":
                import_plugin(info)
        ordered = self._resolve_order([i for i in candidates if i.status == "loaded"])
        callers = {id(info): self._register_whole(info) for info in reversed(ordered)}
        for info in ordered:
            if info.status == "loaded":
                self._collect(info, callers[id(info)])
        self._check_conflicts(ordered)
        loaded = [i for i in ordered if i.status == "loaded"]
        for position, info in enumerate(loaded):
            info.position = position
        rest = sorted((i for i in candidates if i.status != "loaded"), key=lambda i: i.name)
        self.infos = loaded + rest
        self._warn_unmatched()
        self._raise_if_strict()

    def plugins(self) -> list[PluginInfo]:
        """Every plugin the manager considered, loaded ones first in their resolved order."""
        self.load()
        return list(self.infos)

    def get_plugin(self, name: str) -> PluginInfo:
        """One plugin by entry-point or distribution name; unknown lists the known."""
        infos = self.plugins()
        for info in infos:
            if info.name == name:
                return info
        for info in infos:
            if info.distribution and normalize(info.distribution) == normalize(name):
                return info
        names = tuple(i.name for i in infos)
        raise UnknownNameError(
            f"no plugin named {name!r}; known plugins: {', '.join(names) or 'none'}",
            name=name,
            available=names,
        )

    def registrations(self, seam: str) -> list[Registration]:
        """Everything registered on ``seam``, in plugin order, conflicting names left out."""
        self.load()
        if seam not in self._registry:
            raise UnknownNameError(
                f"unknown seam {seam!r}; seams are {', '.join(SEAMS)}",
                name=seam,
                available=tuple(SEAMS),
            )
        return list(self._registry[seam])

    def lookup(self, seam: str, name: str) -> Registration:
        """The registration named ``name`` on ``seam``; an unknown name lists the installed."""
        for reg in self.registrations(seam):
            if reg.name == name:
                return reg
        names = tuple(r.name for r in self.registrations(seam))
        what = seam.replace("_", " ")[:-1]
        disabled = [i for i in self.plugins() if i.status == "disabled"]
        same = next((i for i in disabled if name in (i.name, i.distribution)), None)
        if same is not None:
            message = (
                f"no {what} named {name!r} is loaded: plugin {same.name!r} "
                f"({same.distribution or same.source}) is installed but disabled: "
                f"{same.error}; enable it to use it"
            )
        else:
            message = (
                f"no {what} named {name!r} is installed; installed: {', '.join(names) or 'none'}"
            )
            message += (
                "; disabled plugins are not imported, so what they offer is unknown: "
                + ", ".join(f"{i.name} ({i.error})" for i in disabled)
                + " (enable the one that provides it)"
                if disabled
                else " (pip install the plugin that provides it)"
            )
        raise UnknownNameError(message, name=name, available=names)

    def hook_impls(self, hook_name: str) -> list[tuple[str, Callable[..., object]]]:
        """``(plugin name, function)`` of every implementation of a hook, in call order."""
        self.load()
        caller = getattr(self.pm.hook, hook_name, None)
        if caller is None or caller.spec is None:
            known = sorted(n for n in vars(hookspecs) if n.startswith("agentkit_"))
            raise UnknownNameError(
                f"no hook named {hook_name!r}; the hooks are {', '.join(known)}",
                name=hook_name,
                available=tuple(known),
            )
        return [(impl.plugin_name, impl.function) for impl in reversed(caller.get_hookimpls())]

    def fingerprint(self) -> str:
        """12 hex digits over the resolved order (names, versions, statuses) to compare setups."""
        import hashlib  # for this report only: a run does not load it

        text = "\n".join(f"{i.name} {i.version or '-'} {i.status}" for i in self.plugins())
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def add_commands(
        self,
        subparsers: Any,
        *,
        prog: str = "agentkit",
    ) -> list[str]:
        """Let every plugin add CLI subcommands; a plugin taking a used name is left out.

        Each plugin adds to a scratch subparsers object first, so a plugin that fails or reuses
        a name leaves nothing half-added. Returns the problems (also added to ``warnings``).
        """
        import argparse

        problems: list[str] = []
        taken = set(subparsers.choices)
        for name, fn in self.hook_impls(COMMANDS_HOOK):
            # the host's parser class, so plugin commands report usage errors as its own do
            parser_class = getattr(subparsers, "_parser_class", argparse.ArgumentParser)
            scratch = parser_class(prog=prog).add_subparsers(prog=prog)
            try:
                fn(cli=scratch)
            except KeyboardInterrupt as exc:
                raise PluginInterrupted(
                    f"interrupted while adding the commands of plugin {name!r}"
                ) from exc
            except BaseException as exc:  # argparse's own exit, or a plugin's sys.exit
                problems.append(
                    f"plugin {name!r}: its commands failed: {type(exc).__name__}: {exc}"
                )
                continue
            clash = sorted(taken & set(scratch.choices))
            if clash:
                problems.append(
                    f"plugin {name!r} adds command {', '.join(clash)}, which is already taken; "
                    "its commands are left out"
                )
                continue
            taken.update(scratch.choices)
            subparsers._name_parser_map.update(scratch._name_parser_map)
            subparsers._choices_actions.extend(scratch._choices_actions)
            info = next((i for i in self.infos if i.name == name), None)
            if info is not None:
                info.commands = sorted(scratch.choices)
        self.warnings.extend(problems)
        return problems

    # ------------------------------------------------------------------ stages

    def _resolve_config(self) -> PluginConfig:
        cfg = self._config_arg
        if isinstance(cfg, PluginConfig):
            return cfg
        if cfg is not None:
            return read_plugin_config(cfg)
        if self._use_entry_points:
            return load_plugin_config()
        return PluginConfig(strict=strict_from_env())

    def _info_in_code(self, name: str, obj: object) -> PluginInfo:
        if isinstance(obj, str):  # a module name: imported (and its failure recorded) later
            loader = functools.partial(importlib.import_module, obj)
            return PluginInfo(name=name, module=obj, source="code", loader=loader)
        module = obj.__name__ if isinstance(obj, ModuleType) else type(obj).__module__
        return PluginInfo(name=name, module=module, obj=obj, source="code")

    def _apply_lists(self, candidates: list[PluginInfo]) -> None:
        """Allow/deny lists act on discovered plugins; ones registered in code were asked for."""
        cfg = self.config
        allow = None if cfg.load is None else {normalize(n) for n in cfg.load}
        deny = {normalize(n) for n in cfg.disable}
        for info in candidates:
            if info.source == "code":
                continue
            names = _names_of(info)
            if allow is not None and not names & allow:
                info.status = "disabled"
                info.error = f"not in the allow-list ({cfg.source_of('load')})"
            elif names & deny:
                info.status = "disabled"
                info.error = f"in the deny-list ({cfg.source_of('disable')})"

    def _resolve_order(self, infos: list[PluginInfo]) -> list[PluginInfo]:
        for info in infos:
            try:
                read_declarations(info)
            except (TypeError, ValueError) as exc:
                info.status = "failed"
                info.error = f"bad order declaration: {exc}"
        good = [i for i in infos if i.status == "loaded"]
        return resolve_order(good, self.config.order, self.config.source_of("order"))

    def _register_whole(self, info: PluginInfo) -> list[pluggy.HookCaller]:
        """Register with pluggy, and the plugin's hook callers (none if it was left out).

        On any error nothing of the plugin stays registered.
        """
        try:
            self.pm.register(info.obj, name=info.name)
            callers = self.pm.get_hookcallers(info.obj) or []
            unknown = sorted(c.name for c in callers if c.spec is None)
            if unknown:
                raise PluginLoadError(
                    f"implements unknown hook {', '.join(unknown)}; the hooks are listed by "
                    "`agentkit plugins hooks`",
                    plugin=info.name,
                )
            problems = [
                f"hook {caller.name}: {problem}"
                for caller in sorted(callers, key=lambda c: c.name)
                for impl in caller.get_hookimpls()
                if impl.plugin is info.obj
                for problem in _refusals(caller.name, impl)
            ]
            if problems:
                raise PluginLoadError(
                    f"plugin {info.name!r}: {'; '.join(problems)}", plugin=info.name
                )
        except KeyboardInterrupt as exc:
            raise PluginInterrupted(f"interrupted while registering plugin {info.name!r}") from exc
        except BaseException as exc:  # SystemExit too: a plugin never ends the host
            self._leave_out(info, "failed", f"registration failed: {type(exc).__name__}: {exc}")
            return []
        return callers

    def _leave_out(self, info: PluginInfo, status: str, error: str) -> None:
        if info.obj is not None and self.pm.is_registered(info.obj):
            self.pm.unregister(info.obj)
        info.status, info.error, info.position = status, error, None

    def _collect(self, info: PluginInfo, callers: list[pluggy.HookCaller]) -> None:
        """Call this plugin's registration hooks; all of its registrations, or none.

        ``callers`` are its hook callers, as registering it found them (asking pluggy scans
        every hook's implementations).
        """
        staged: list[Registration] = []
        hooks: list[str] = []
        try:
            for caller in callers:
                seam = _SEAM_OF_HOOK.get(caller.name)
                if seam is None:
                    if caller.name in CONTESTED_HOOKS or caller.name == COMMANDS_HOOK:
                        hooks.append(caller.name)
                    continue
                for impl in caller.get_hookimpls():
                    if impl.plugin is info.obj:
                        result = impl.function(register=_registrar(seam, info, staged))
                        if inspect.isawaitable(result):
                            getattr(result, "close", lambda: None)()
                            raise TypeError(f"{caller.name} must be a plain function, not async")
        except KeyboardInterrupt as exc:
            raise PluginInterrupted(f"interrupted while registering plugin {info.name!r}") from exc
        except BaseException as exc:  # SystemExit too: a plugin never ends the host
            self._leave_out(info, "failed", f"registration failed: {type(exc).__name__}: {exc}")
            return
        info.hooks = sorted(hooks)
        info.registrations = staged
        info.provides = [f"{r.seam}:{r.name}" for r in staged]

    def _check_conflicts(self, ordered: list[PluginInfo]) -> None:
        """One name on one seam from two plugins: the configured pick, or both left out."""
        claims: dict[tuple[str, str], list[PluginInfo]] = {}
        for info in ordered:
            if info.status == "loaded":
                for reg in info.registrations:
                    claims.setdefault((reg.seam, reg.name), []).append(info)
        pick = self.config.pick
        dropped: dict[str, set[tuple[str, str]]] = {}
        for (seam, name), who in claims.items():
            if len(who) < 2:
                continue
            chosen = pick.get(f"{seam}.{name}")
            keep = next((i for i in who if chosen and normalize(chosen) in _names_of(i)), None)
            if keep is not None:
                for info in who:
                    if info is not keep:
                        dropped.setdefault(info.name, set()).add((seam, name))
                continue
            names = " and ".join(f"{i.name} ({i.distribution or i.source})" for i in who)
            message = (
                f"{seam} name {name!r} is registered by {names}; disable one, or choose with "
                f'pick = {{"{seam}.{name}" = "{who[0].name}"}} in {self.config.file_hint()}'
            )
            for info in who:
                if info.status == "loaded":
                    self._leave_out(info, "conflict", message)
        for info in ordered:
            if info.status != "loaded":
                continue
            skip = dropped.get(info.name, set())
            info.registrations = [r for r in info.registrations if (r.seam, r.name) not in skip]
            info.provides = [f"{r.seam}:{r.name}" for r in info.registrations]
            for reg in info.registrations:
                self._registry[reg.seam].append(reg)

    def _warn_unmatched(self) -> None:
        cfg = self.config
        known: set[str] = set()
        for info in self.infos:
            known |= _names_of(info)
        for key in ("load", "disable", "order"):
            for name in getattr(cfg, key) or ():
                if normalize(name) not in known:
                    self._warn(
                        f"{key} names {name!r} ({cfg.source_of(key)}), which matches no plugin"
                    )
        for target, name in cfg.pick.items():
            seam = target.partition(".")[0]
            if seam not in SEAMS:
                raise ConfigError(
                    f"pick {target!r} ({cfg.source_of('pick')}) names unknown seam {seam!r}; "
                    f"seams are {', '.join(SEAMS)}",
                    value=target,
                    source=cfg.source_of("pick"),
                )
            if normalize(name) not in known:
                self._warn(f"pick {target!r} names {name!r}, which matches no plugin")

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        warnings.warn(message, UserWarning, stacklevel=4)

    def _raise_if_strict(self) -> None:
        if not self.strict:
            return
        bad = [i for i in self.infos if i.status in BAD_STATUSES]
        if bad:
            error = PluginConflictError if bad[0].status == "conflict" else PluginLoadError
            detail = "; ".join(f"{i.name} {i.status}: {i.error}" for i in bad)
            raise error(
                f"{len(bad)} plugin(s) could not load: {detail} (strict mode: unset "
                "AGENTKIT_STRICT_PLUGINS / strict=True to leave them out instead)",
                plugin=bad[0].name,
            )


# ---------------------------------------------------------------------- helpers


def _registrar(seam: str, info: PluginInfo, staged: list[Registration]) -> Callable[..., None]:
    def register(name: str, *values: object, **meta: object) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"register() on {seam} needs a non-empty name, got {name!r}")
        if any(r.seam == seam and r.name == name for r in staged):
            raise ValueError(f"registers {seam} name {name!r} twice")
        value = values[0] if len(values) == 1 else values
        staged.append(Registration(seam, name, value, info.name, info.distribution, meta))

    return register


def _refusals(hook: str, impl: pluggy.HookImpl) -> list[str]:
    """Why one of a plugin's hook implementations cannot be used; empty when it can.

    agentkit calls every hook itself and folds the results in the one plugin order, so a
    wrapper has nothing to wrap (and pluggy would run it around a call agentkit never makes),
    and ``tryfirst``/``trylast`` would reorder a hook behind the user's ``order = [...]``.
    A contested hook must also be callable with the arguments it names.
    """
    problems: list[str] = []
    if impl.wrapper or impl.hookwrapper:
        kind = "wrapper=True" if impl.wrapper else "hookwrapper=True"
        problems.append(
            f"it is marked {kind}: agentkit calls each implementation itself and folds the "
            "results, so there is no call to wrap; drop the marker and return a value"
        )
    ordered = hook in CONTESTED_HOOKS or hook == COMMANDS_HOOK
    if ordered and (impl.tryfirst or impl.trylast):
        kind = "tryfirst=True" if impl.tryfirst else "trylast=True"
        problems.append(
            f"it is marked {kind}, which would reorder it behind the plugin order the user "
            "configures; declare AGENTKIT_PRIORITY, AGENTKIT_BEFORE or AGENTKIT_AFTER instead"
        )
    field_name = FIELD_OF_HOOK.get(hook)
    if field_name is not None:
        try:
            declared_arguments(field_name, impl.function)
        except TypeError as exc:
            problems.append(str(exc))
    return problems


def _names_of(info: PluginInfo) -> set[str]:
    names = {normalize(info.name)}
    if info.distribution:
        names.add(normalize(info.distribution))
    return names


def _plugin_name(plugin: object) -> str:
    if isinstance(plugin, str):
        return plugin
    name = getattr(plugin, "AGENTKIT_NAME", None) or getattr(plugin, "__name__", None)
    return str(name or type(plugin).__name__)


_default: PluginManager | None = None


def get_plugin_manager() -> PluginManager:
    """The process-wide plugin manager over the installed plugins, loaded on first use."""
    global _default
    if _default is None:
        _default = PluginManager()
    return _default.load()


def manager_or_default(manager: PluginManager | None) -> PluginManager:
    """``manager`` loaded, or the process-wide one when it is None.

    Only the edges call it (``Kit``, ``Agent(...)``, the CLI): every lookup below them takes
    its manager as a required argument.
    """
    return get_plugin_manager() if manager is None else manager.load()


def reset_plugin_manager() -> None:
    """Forget the process-wide manager, so the next use discovers again (tests)."""
    global _default
    _default = None
