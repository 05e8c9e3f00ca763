"""Discovery: finding plugins (entry points, a plugins directory) without importing them.

Only metadata is read until a plugin is known to be wanted and compatible: the declared
``agentkit-core`` range is checked before any of a plugin's code runs, and a plugin whose
import fails is recorded as ``failed`` instead of taking the host down.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import field
from types import ModuleType
from typing import TYPE_CHECKING
from typing import Any

from ._errors import ConfigError
from ._records import record

if TYPE_CHECKING:
    from pathlib import Path  # a plugins directory's only: a first run has none

    from ._plugins import Registration

GROUP = "agentkit"
CORE_DISTRIBUTION = "agentkit-core"

#: Where a plugin came from; on one name, an earlier source wins (code is the most explicit).
SOURCES = ("code", "plugins_dir", "entry_point")
STATUSES = ("loaded", "disabled", "failed", "incompatible", "shadowed", "conflict")


@record(slots=True)
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
    found: list[PluginInfo] = []
    seen: set[str] = set()
    for dist in _distributions(path):
        if path is None and not _core_version_cache and _is_core(dist):
            _core_version_cache.append(_read_headers(dist)[1])  # spares core_version a scan
        if isinstance(dist, _Folder):
            eps = dist.entry_points_of(GROUP)
        else:
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


def _distributions(path: list[str] | None) -> Iterable[Any]:
    """Every distribution on ``path`` (``sys.path``), in ``importlib_metadata``'s order.

    Read straight from the ``.dist-info``/``.egg-info`` folders when that is all there is to
    read: importing ``importlib_metadata`` (with ``zipfile``, ``email``, ``tempfile`` and
    ``shutil`` behind it) was a tenth of a first run. A zip or other non-folder entry on the
    path, or an import finder of its own that finds distributions, gets the library.
    """
    entries = sys.path if path is None else path
    folders = _metadata_folders(entries)
    if folders is None:
        import importlib_metadata

        return importlib_metadata.distributions(**({} if path is None else {"path": path}))
    return map(_Folder, folders)


def _metadata_folders(entries: list[str]) -> list[str] | None:
    """The metadata folders in ``entries``, in directory order.

    None when ``importlib_metadata`` must answer: it knows zips, eggs and other finders.
    """
    if any(_own_finder(finder) for finder in sys.meta_path):
        return None
    folders: list[str] = []
    for entry in entries:
        if not isinstance(entry, str) or entry.lower().endswith(".egg"):
            return None
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            return None  # a zip on the path
        except OSError:
            continue
        ends = (".dist-info", ".egg-info")
        folders.extend(os.path.join(entry, n) for n in names if n.lower().endswith(ends))
    return folders


def _own_finder(finder: object) -> bool:
    """Whether a ``sys.meta_path`` finder finds distributions other than the path's folders."""
    if getattr(finder, "find_distributions", None) is None:
        return False
    kind = finder if isinstance(finder, type) else type(finder)
    return not (kind is importlib.machinery.PathFinder or kind.__module__ == "importlib_metadata")


class _Folder:
    """One ``.dist-info``/``.egg-info`` folder, read as ``importlib_metadata`` reads it."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def read_text(self, name: str) -> str | None:
        """A file of the folder; ``""``: the path itself (an ``.egg-info`` file).

        What ``open(path, encoding="utf-8").read()`` gives (each newline read as a line feed), read
        through the raw file: a text file's layers (a buffer, a decoder, a terminal check)
        cost more than the reading, for each of the ~150 files discovery reads.
        """
        try:
            with open(os.path.join(self.path, name) if name else self.path, "rb", 0) as f:
                text = f.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text

    def entry_points_of(self, group: str) -> list[_EntryPoint]:
        """The entry points of ``group`` (a file not naming it is not parsed)."""
        text = self.read_text("entry_points.txt")
        if not text or group not in text:
            return []
        found: list[_EntryPoint] = []
        current = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("[") and line.endswith("]"):
                current = line[1:-1].strip()
            elif current == group and "=" in line:
                name, _, value = line.partition("=")
                found.append(_EntryPoint(name.strip(), value.strip(), group))
        return found


#: ``module``, ``module:attr.attr`` and an ignored ``[extras]``, as importlib.metadata parses.
_ENTRY_VALUE = re.compile(
    r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"
)


@record(frozen=True, slots=True)
class _EntryPoint:
    """One entry point read from a folder.

    A record needs a docstring: ``dataclasses`` would build one from ``inspect.signature``,
    whose first use compiles ``tokenize``'s patterns (~4 ms of a first run).
    """

    name: str
    value: str
    group: str

    def load(self) -> object:
        match = _ENTRY_VALUE.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r} = {self.value!r} does not parse")
        module = importlib.import_module(match["module"])
        attrs = (match["attr"] or "").split(".")
        return functools.reduce(getattr, filter(None, attrs), module)


def _read_headers(dist: Any) -> tuple[str, str, list[str]]:
    """Name, Version and Requires-Dist from METADATA's header block.

    Read directly rather than through ``dist.metadata``: the email parser behind that costs
    about 0.2 ms a distribution, which is most of the discovery time with many plugins. The
    files are those ``metadata`` reads: METADATA, PKG-INFO, or the path itself (an
    ``.egg-info`` file); none gives ``"?"``, as an empty ``metadata`` does.
    """
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("")
    if text is None:
        return "?", "?", []
    name = version = "?"
    requires: list[str] = []
    for line in text.partition("\n\n")[0].splitlines():  # not the description below
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
        dist = next((d for d in _distributions(None) if _is_core(d)), None)
        if dist is not None:
            version = _read_headers(dist)[1]
        else:
            from . import __version__ as version
        _core_version_cache.append(version)
    return _core_version_cache[0]


def _is_core(dist: object) -> bool:
    """Whether ``dist`` is agentkit-core's (a folder's name is looked at only if it can be)."""
    folder = getattr(dist, "path", None)
    if isinstance(folder, str) and not os.path.basename(folder).lower().startswith("agentkit"):
        return False
    return _names(dist, CORE_DISTRIBUTION)


def _names(dist: Any, name: str) -> bool:
    """Whether ``dist`` is distribution ``name`` by its folder's name, as a lookup matches."""
    folder = getattr(dist, "path", None) or getattr(dist, "_path", None)
    if folder is None:
        return normalize(_read_headers(dist)[0]) == normalize(name)
    stem = os.path.basename(str(folder)).rpartition(".")[0].partition("-")[0]
    return normalize(stem) == normalize(name)


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
