"""Discovery: finding plugins (entry points, a plugins directory) without importing them.

Only metadata is read until a plugin is known to be wanted and compatible: the declared
``agentkit-core`` range is checked before any of a plugin's code runs, and a plugin whose
import fails is recorded as ``failed`` instead of taking the host down.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING
from typing import Any

from ._errors import ConfigError

if TYPE_CHECKING:
    from ._plugins import Registration

GROUP = "agentkit"
CORE_DISTRIBUTION = "agentkit-core"

#: Where a plugin came from; on one name, an earlier source wins (code is the most explicit).
SOURCES = ("code", "plugins_dir", "entry_point")
STATUSES = ("loaded", "disabled", "failed", "incompatible", "shadowed", "conflict")


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
    obj: object = field(default=None, repr=False)
    source: str = "code"
    requires_core: str | None = None
    registrations: list[Registration] = field(default_factory=list, repr=False)
    commands: list[str] = field(default_factory=list)
    #: How to import it (an entry point or a file), until it is imported.
    loader: Callable[[], object] | None = field(default=None, repr=False, compare=False)


def normalize(name: str) -> str:
    """A distribution or plugin name as packaging compares them (``Foo_Bar`` == ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def candidate_key(info: PluginInfo) -> tuple[str, int, str, str]:
    return (
        info.name,
        SOURCES.index(info.source),
        normalize(info.distribution or ""),
        info.version or "",
    )


def discover_entry_points(path: list[str] | None) -> list[PluginInfo]:
    """Entry points of group ``agentkit``, metadata only: nothing is imported here."""
    import importlib_metadata

    found: list[PluginInfo] = []
    seen: set[str] = set()
    for dist in importlib_metadata.distributions(**({} if path is None else {"path": path})):
        eps = [ep for ep in dist.entry_points if ep.group == GROUP]
        if not eps:
            continue
        dist_name, version, requires_dist = _read_headers(dist)
        if normalize(dist_name) in seen:  # one copy per distribution, as importing would see
            continue
        seen.add(normalize(dist_name))
        requires = _core_requirement(requires_dist)
        for ep in eps:
            found.append(
                PluginInfo(
                    name=ep.name,
                    distribution=dist_name,
                    version=version,
                    module=ep.value,
                    source="entry_point",
                    requires_core=requires,
                    loader=ep.load,
                )
            )
    return found


def _read_headers(dist: Any) -> tuple[str, str, list[str]]:
    """Name, Version and Requires-Dist from METADATA's header block.

    Read directly rather than through ``dist.metadata``: the email parser behind that costs
    about 0.2 ms a distribution, which is most of the discovery time with many plugins.
    """
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    if text is None:
        meta = dist.metadata
        return meta["Name"] or "?", meta["Version"] or "?", meta.get_all("Requires-Dist") or []
    name = version = "?"
    requires: list[str] = []
    for line in text.splitlines():
        if not line:
            break
        key, _, value = line.partition(":")
        if key == "Name":
            name = value.strip()
        elif key == "Version":
            version = value.strip()
        elif key == "Requires-Dist":
            requires.append(value.strip())
    return name, version, requires


def discover_dir(directory: Path) -> list[PluginInfo]:
    if not directory.is_dir():
        raise ConfigError(
            f"plugins_dir {str(directory)!r} is not a directory",
            value=str(directory),
            source="plugins_dir",
        )
    return [
        PluginInfo(
            name=file.stem,
            module=file.name,
            source="plugins_dir",
            loader=functools.partial(_import_file, file),
        )
        for file in sorted(directory.glob("*.py"))
        if not file.name.startswith("_")
    ]


def _import_file(file: Path) -> ModuleType:
    module_name = f"agentkit_plugins_dir_{normalize(file.stem).replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def mark_shadowed(candidates: list[PluginInfo]) -> None:
    """Per entry-point name the first by source, then distribution name, wins; never by path."""
    kept: dict[str, PluginInfo] = {}
    for info in candidates:  # already sorted by candidate_key
        if info.status != "loaded":
            continue
        first = kept.setdefault(info.name, info)
        if first is not info:
            info.status = "shadowed"
            who = first.distribution or f"the plugin registered from {first.source}"
            info.error = f"shadowed by {who} (same plugin name {info.name!r}); that one is kept"


def _core_requirement(requires: list[str]) -> str | None:
    """The ``agentkit-core`` specifier among Requires-Dist lines, ignoring extras-only ones."""
    for line in requires:
        head, _, marker = line.partition(";")
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)", head)
        if not match or normalize(match.group(1)) != CORE_DISTRIBUTION:
            continue
        if "extra" in marker:
            continue
        spec = match.group(3).strip().strip("()").strip()
        return spec + (f"; {marker.strip()}" if marker.strip() else "")
    return None


_core_version_cache: list[str] = []


def core_version() -> str:
    """The installed agentkit-core version, from its metadata (the package's as a fallback)."""
    if not _core_version_cache:
        import importlib_metadata

        try:
            version = _read_headers(importlib_metadata.distribution(CORE_DISTRIBUTION))[1]
        except importlib_metadata.PackageNotFoundError:
            from . import __version__ as version
        _core_version_cache.append(version)
    return _core_version_cache[0]


_RELEASE = re.compile(r"\d+(?:\.\d+)*")
_CLAUSE = re.compile(r"\s*(>=|<=|==|!=|<|>)\s*(\d+(?:\.\d+)*)\s*")
_COMPARE: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": tuple.__ge__,
    "<=": tuple.__le__,
    "==": tuple.__eq__,
    "!=": tuple.__ne__,
    "<": tuple.__lt__,
    ">": tuple.__gt__,
}


def _plain_contains(spec_text: str, installed: str) -> bool | None:
    """Whether release ``installed`` meets plain clauses (``>=0.1,<1``); None: ask packaging.

    Plugins' requirements are such clauses; comparing the zero-padded numbers is PEP 440's
    answer for them, and spares every first run importing ``packaging`` (~5 ms).
    """
    clauses = [_CLAUSE.fullmatch(clause) for clause in spec_text.split(",")]
    plain = [clause for clause in clauses if clause is not None]
    if not _RELEASE.fullmatch(installed) or len(plain) < len(clauses):
        return None
    have = tuple(map(int, installed.split(".")))
    for clause in plain:
        want = tuple(map(int, clause[2].split(".")))
        width = max(len(have), len(want))
        padded = (have + (0,) * (width - len(have)), want + (0,) * (width - len(want)))
        if not _COMPARE[clause[1]](*padded):
            return False
    return True


def check_core_range(info: PluginInfo) -> None:
    if not info.requires_core:
        return
    spec_text, _, marker = info.requires_core.partition(";")
    if marker.strip():
        from packaging.markers import Marker

        if not Marker(marker).evaluate():
            return
    installed = core_version()
    contains = _plain_contains(spec_text, installed)
    if contains is None:
        from packaging.specifiers import InvalidSpecifier
        from packaging.specifiers import SpecifierSet

        try:
            contains = SpecifierSet(spec_text).contains(installed, prereleases=True)
        except InvalidSpecifier as exc:
            info.status = "failed"
            info.error = f"its agentkit-core requirement {spec_text!r} does not parse: {exc}"
            return
    if not contains:
        info.status = "incompatible"
        info.error = (
            f"{info.distribution} {info.version} requires agentkit-core{spec_text}, but "
            f"agentkit-core {installed} is installed; install a release of the plugin that "
            "supports it, or disable the plugin"
        )


class PluginInterrupted(KeyboardInterrupt):
    """Ctrl-C (or a KeyboardInterrupt raised) while a plugin was imported or registered.

    Still a KeyboardInterrupt, so it is never swallowed and whoever catches that catches it;
    its message names the plugin, which the command line prints as its one line.
    """


def import_plugin(info: PluginInfo) -> None:
    if info.loader is None:
        return
    try:
        info.obj = info.loader()
    except KeyboardInterrupt as exc:
        raise PluginInterrupted(
            f"interrupted while importing plugin {info.name!r} (module {info.module!r})"
        ) from exc
    except BaseException as exc:  # a broken plugin, even one calling sys.exit, never ends the host
        info.status = "failed"
        info.error = f"import of {info.module!r} failed: {type(exc).__name__}: {exc}"
    info.loader = None
