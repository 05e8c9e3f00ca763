"""The plugin manager: discovery, one deterministic order, and the registries of every seam.

Discovery order (install order, ``sys.path``, directory order, hash seed) must never change a
result, so the manager never relies on pluggy's own loader or call order. It reads the entry
points itself, sorts the plugins (``before``/``after`` constraints, then priority, then name),
and registers them with pluggy in reverse, because pluggy calls the last registered first: the
result is that pluggy's call order is exactly the resolved order.
"""

from __future__ import annotations

import heapq
import importlib
import os
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from types import ModuleType
from typing import Any

import pluggy

from . import hookspecs
from ._errors import PluginConflictError
from ._errors import PluginLoadError
from ._errors import PluginOrderError
from ._errors import UnknownNameError

GROUP = "agentkit"

#: Seam name -> the registration hook that fills it.
SEAMS: dict[str, str] = {
    "compactors": "agentkit_register_compactors",
    "schema_adapters": "agentkit_register_schema_adapters",
    "checkpoint_stores": "agentkit_register_checkpoint_stores",
    "guardrails": "agentkit_register_guardrails",
    "tool_sources": "agentkit_register_tool_sources",
    "models": "agentkit_register_models",
    "instruction_parts": "agentkit_register_instruction_parts",
}

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


@dataclass(slots=True)
class Registration:
    """One thing a plugin registered on a seam: its name, the value(s), and who offered it."""

    seam: str
    name: str
    value: Any
    plugin: str
    distribution: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PluginInfo:
    """What the manager knows of one plugin; ``status`` is one of :data:`STATUSES`."""

    name: str
    distribution: str | None = None
    version: str | None = None
    status: str = "loaded"
    error: str | None = None
    position: int | None = None
    priority: int = 0
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    provides: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    module: str | None = None
    obj: Any = field(default=None, repr=False)


STATUSES = ("loaded", "disabled", "failed", "incompatible", "shadowed", "conflict")


def _split_names(value: str) -> list[str]:
    return [n.strip() for n in value.replace(";", ",").split(",") if n.strip()]


class PluginManager:
    """Discovers plugins, orders them, registers them with pluggy and keeps the seam registries.

    Build one with :func:`get_plugin_manager` (process-wide, lazily) or directly for a fresh,
    isolated manager (tests). Nothing is discovered until :meth:`load` runs.
    """

    def __init__(
        self,
        *,
        entry_points: bool = True,
        plugins: Iterable[Any] = (),
        strict: bool | None = None,
    ) -> None:
        self._use_entry_points = entry_points
        self._extra: list[tuple[str, Any]] = [(_plugin_name(p), p) for p in plugins]
        env_strict = os.environ.get("AGENTKIT_STRICT_PLUGINS", "").strip().lower()
        self.strict = strict if strict is not None else env_strict in ("1", "true", "yes", "on")
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.infos: list[PluginInfo] = []
        self._registry: dict[str, list[Registration]] = {s: [] for s in SEAMS}
        self._loaded = False

    # ------------------------------------------------------------------ public surface

    @property
    def hook(self) -> Any:
        """Pluggy's hook relay; its call order is the resolved plugin order."""
        self.load()
        return self.pm.hook

    def register(self, plugin: Any, name: str | None = None) -> None:
        """Add a plugin object or module in code, without packaging it; re-resolves the order."""
        self._extra.append((name or _plugin_name(plugin), plugin))
        if self._loaded:
            self._loaded = False
            self.load()

    def load(self) -> PluginManager:
        """Discover, order and register every plugin (once; later calls are free)."""
        if self._loaded:
            return self
        self._loaded = True
        for info in self.infos:
            if info.obj is not None and self.pm.is_registered(info.obj):
                self.pm.unregister(info.obj)
        self.infos = []
        self._registry = {s: [] for s in SEAMS}
        candidates: list[PluginInfo] = []
        if self._use_entry_points:
            candidates.extend(self._discover())
        for name, obj in self._extra:
            candidates.append(_info_for(name, obj))
        for info in candidates:
            if info.status == "loaded" and info.obj is not None:
                _read_declarations(info)
        ordered = _resolve_order([i for i in candidates if i.status == "loaded"])
        rest = sorted((i for i in candidates if i.status != "loaded"), key=lambda i: i.name)
        for position, info in enumerate(ordered):
            info.position = position
        for info in reversed(ordered):
            self.pm.register(info.obj, name=info.name)
        for info in ordered:
            self._collect(info)
        self.infos = ordered + rest
        self._check_conflicts()
        self._raise_if_strict()
        return self

    def plugins(self) -> list[PluginInfo]:
        """Every plugin the manager considered, loaded ones first in their resolved order."""
        self.load()
        return list(self.infos)

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
        raise UnknownNameError(
            f"no {seam.replace('_', ' ')[:-1]} named {name!r} is installed; installed: "
            f"{', '.join(names) or 'none'} (pip install the plugin that provides it)",
            name=name,
            available=names,
        )

    def hook_impls(self, hook_name: str) -> list[tuple[str, Callable[..., Any]]]:
        """``(plugin name, function)`` of every implementation of a hook, in call order."""
        self.load()
        caller = getattr(self.pm.hook, hook_name)
        return [(impl.plugin_name, impl.function) for impl in reversed(caller.get_hookimpls())]

    # ------------------------------------------------------------------ internals

    def _discover(self) -> Iterator[PluginInfo]:
        import importlib_metadata

        allow_raw = os.environ.get("AGENTKIT_LOAD_PLUGINS")
        allow = None if allow_raw is None else set(_split_names(allow_raw))
        deny = set(_split_names(os.environ.get("AGENTKIT_DISABLE_PLUGINS", "")))
        seen: dict[str, PluginInfo] = {}
        eps = sorted(
            importlib_metadata.entry_points(group=GROUP),
            key=lambda ep: (ep.name, _dist_name(ep) or "", ep.value),
        )
        for ep in eps:
            dist = _dist_name(ep)
            info = PluginInfo(
                name=ep.name,
                distribution=dist,
                version=ep.dist.version if ep.dist is not None else None,
                module=ep.value,
            )
            if ep.name in seen:
                kept = seen[ep.name]
                info.status = "shadowed"
                info.error = f"shadowed by {kept.distribution} (same entry-point name {ep.name!r})"
                yield info
                continue
            seen[ep.name] = info
            names = {ep.name, dist or ""}
            if (allow is not None and not names & allow) or names & deny:
                info.status = "disabled"
                yield info
                continue
            try:
                info.obj = ep.load()
            except Exception as exc:  # a broken plugin never takes the host down
                info.status = "failed"
                info.error = f"import of {ep.value!r} failed: {type(exc).__name__}: {exc}"
            yield info

    def _collect(self, info: PluginInfo) -> None:
        """Call this plugin's registration hooks; all of its registrations, or none."""
        staged: list[Registration] = []
        hooks: list[str] = []
        try:
            for caller in self.pm.get_hookcallers(info.obj) or ():
                hook_name = caller.name
                if hook_name in CONTESTED_HOOKS:
                    hooks.append(hook_name)
                seam = next((s for s, h in SEAMS.items() if h == hook_name), None)
                if seam is None:
                    continue
                for impl in caller.get_hookimpls():
                    if impl.plugin is info.obj:
                        impl.function(register=_registrar(seam, info, staged))
        except Exception as exc:
            self.pm.unregister(info.obj)
            info.status = "failed"
            info.error = f"registration failed: {type(exc).__name__}: {exc}"
            info.position = None
            return
        info.hooks = sorted(hooks)
        info.provides = [f"{r.seam}:{r.name}" for r in staged]
        for reg in staged:
            self._registry[reg.seam].append(reg)

    def _check_conflicts(self) -> None:
        for seam, regs in self._registry.items():
            by_name: dict[str, list[Registration]] = {}
            for reg in regs:
                by_name.setdefault(reg.name, []).append(reg)
            for name, claims in by_name.items():
                if len(claims) < 2:
                    continue
                who = " and ".join(f"{c.plugin} ({c.distribution or 'in code'})" for c in claims)
                message = f"{seam} name {name!r} is registered by {who}; disable one"
                for info in self.infos:
                    if any(c.plugin == info.name for c in claims):
                        info.status = "conflict"
                        info.error = message
                self._registry[seam] = [r for r in self._registry[seam] if r.name != name]

    def _raise_if_strict(self) -> None:
        if not self.strict:
            return
        bad = [i for i in self.infos if i.status in ("failed", "incompatible", "conflict")]
        if bad:
            first = bad[0]
            error = PluginConflictError if first.status == "conflict" else PluginLoadError
            raise error(
                f"plugin {first.name!r} {first.status}: {first.error} "
                "(strict mode: unset AGENTKIT_STRICT_PLUGINS to leave it out instead)",
                plugin=first.name,
            )


def _registrar(seam: str, info: PluginInfo, staged: list[Registration]) -> Callable[..., None]:
    def register(name: str, *values: Any, **meta: Any) -> None:
        value = values[0] if len(values) == 1 else values
        staged.append(Registration(seam, str(name), value, info.name, info.distribution, meta))

    return register


def _dist_name(ep: Any) -> str | None:
    dist = getattr(ep, "dist", None)
    return dist.metadata["Name"] if dist is not None else None


def _plugin_name(plugin: Any) -> str:
    name = getattr(plugin, "AGENTKIT_NAME", None) or getattr(plugin, "__name__", None)
    return str(name or type(plugin).__name__)


def _info_for(name: str, obj: Any) -> PluginInfo:
    if isinstance(obj, str):
        obj = importlib.import_module(obj)
    module = obj.__name__ if isinstance(obj, ModuleType) else type(obj).__module__
    return PluginInfo(name=name, distribution=None, module=module, obj=obj)


def _read_declarations(info: PluginInfo) -> None:
    obj = info.obj
    info.priority = int(getattr(obj, "AGENTKIT_PRIORITY", 0))
    info.before = tuple(getattr(obj, "AGENTKIT_BEFORE", ()))
    info.after = tuple(getattr(obj, "AGENTKIT_AFTER", ()))


def _resolve_order(infos: list[PluginInfo]) -> list[PluginInfo]:
    """Topological order by before/after; ties by higher priority first, then name."""
    by_name = {i.name: i for i in infos}
    edges: dict[str, set[str]] = {n: set() for n in by_name}
    for info in infos:
        for other in info.before:
            if other in by_name:
                edges[info.name].add(other)
        for other in info.after:
            if other in by_name:
                edges[other].add(info.name)
    indegree = {n: 0 for n in by_name}
    for targets in edges.values():
        for t in targets:
            indegree[t] += 1
    heap = [(-by_name[n].priority, n) for n, d in indegree.items() if d == 0]
    heapq.heapify(heap)
    out: list[PluginInfo] = []
    while heap:
        _, name = heapq.heappop(heap)
        out.append(by_name[name])
        for t in sorted(edges[name]):
            indegree[t] -= 1
            if indegree[t] == 0:
                heapq.heappush(heap, (-by_name[t].priority, t))
    if len(out) != len(infos):
        stuck = sorted(n for n, d in indegree.items() if d > 0)
        raise PluginOrderError(
            f"plugin order constraints form a cycle among {', '.join(stuck)}; "
            "remove one of their before=/after= declarations or set an explicit order",
            plugin=stuck[0],
        )
    return out


_default: PluginManager | None = None


def get_plugin_manager() -> PluginManager:
    """The process-wide plugin manager over the installed plugins, loaded on first use."""
    global _default
    if _default is None:
        _default = PluginManager()
    return _default.load()


def reset_plugin_manager() -> None:
    """Forget the process-wide manager, so the next use discovers again (tests)."""
    global _default
    _default = None
