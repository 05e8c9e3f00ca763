"""The files memory store itself: imported on first open, so loading the plugin stays light."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import secrets
import stat
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any
from typing import TypeVar
from urllib.parse import SplitResult
from urllib.parse import unquote
from urllib.parse import urlsplit

from agentkit_core import ConfigError
from agentkit_core import MemoryEntry
from agentkit_core import StorageError
from agentkit_core.plugin import CorruptMemoryEntry
from agentkit_core.plugin import MemoryHit
from agentkit_core.plugin import MemoryListing
from agentkit_core.plugin import create_private
from agentkit_core.plugin import query_terms

from ._bm25 import ScopeIndex
from ._bm25 import rank

SUFFIX = ".md"
LOCK = ".lock"
#: In each scope's directory: the version each forgotten title was forgotten at (JSON), so an
#: entry saved again carries on from there (see MemoryStore.delete).
FORGOTTEN = ".forgotten.json"
#: Characters a title keeps in its file name only as ``%XX``.
_UNSAFE = frozenset('/\\%:*?"<>|')
#: Bytes a file name may take on common file systems.
MAX_NAME = 255
_FENCE = "---"
T = TypeVar("T")


def file_name(title: str) -> str:
    """The file of the entry titled ``title``: unsafe characters as ``%XX``, then ``.md``.

    A leading or trailing dot is encoded too, so no title names a hidden file or ``..``.
    """
    out = []
    last = len(title) - 1
    for i, ch in enumerate(title):
        if ch in _UNSAFE or (ch == "." and i in (0, last)):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out) + SUFFIX


def scope_problem(scope: object) -> str | None:
    """Why ``scope`` is not one plain directory name, as this store's scopes are; None if it is.

    The store checks this itself, whoever calls it: a scope with a separator, a NUL, a leading
    dot (``.``, ``..``, the store's own ``.lock``) or an absolute path would put files outside
    the store's directory, or among its own. Symbolic links are checked where the store meets
    the file system (:meth:`FileMemoryStore._directory`).
    """
    if not isinstance(scope, str):
        return f"is a {type(scope).__name__}, not a string"
    if not scope:
        return "is empty"
    bad = next((c for c in ("/", "\\", "\x00") if c in scope), None)
    if bad is not None:
        return f"holds {bad!r}"
    if scope.startswith("."):
        return "starts with '.'"
    size = _encoded_size(scope)
    if size is None:
        return "holds a lone surrogate, which no file name can hold"
    if size > MAX_NAME:
        return f"makes a directory name of {size} bytes, over the {MAX_NAME} a file system allows"
    return None


def _encoded_size(text: str) -> int | None:
    r"""The bytes ``text`` takes as UTF-8; None when it holds a lone surrogate.

    Strictly UTF-8, not ``os.fsencode``: that writes a surrogate such as ``\udcc3`` as the
    byte it escapes, so ``'\udcc3\udca9'`` would name the file of ``'é'``.
    """
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def title_problem(title: str) -> str | None:
    """Why ``title`` names no entry file of its own; None when it does.

    An empty title would be the hidden file ``.md``, which no listing shows; a NUL or a lone
    surrogate is no file name's character (a surrogate would name another title's file).
    """
    if not title:
        return "is empty"
    if "\x00" in title:
        return "holds a NUL"
    size = _encoded_size(file_name(title))
    if size is None:
        return "holds a lone surrogate, which no file name can hold"
    if size > MAX_NAME:
        return f"makes a file name of {size} bytes, over the {MAX_NAME} a file system allows"
    return None


def title_of(name: str) -> str:
    """The title a file name stands for (the inverse of :func:`file_name`)."""
    return unquote(name[: -len(SUFFIX)], errors="strict")


@dataclass(frozen=True, slots=True)
class _Stamp:
    """What identifies a file's content without reading it: inode, time and size."""

    ino: int
    mtime_ns: int
    size: int


def _stamp(st: os.stat_result) -> _Stamp:
    return _Stamp(st.st_ino, st.st_mtime_ns, st.st_size)


def render_file(entry: MemoryEntry) -> str:
    """The text of an entry's file."""
    lines = [_FENCE, f"version: {entry.version}", f"updated: {entry.updated_at}"]
    if entry.session:
        lines.append(f"session: {entry.session}")
    return "\n".join([*lines, _FENCE, entry.body, ""])


def parse_file(scope: str, path: Path, text: str, mtime: float) -> MemoryEntry:
    """The entry a file holds; :class:`CorruptMemoryEntry` naming the file when it is not one."""

    def corrupt(problem: str) -> CorruptMemoryEntry:
        return CorruptMemoryEntry(
            f"memory file {str(path)!r} cannot be read: {problem}; fix it by hand, or forget "
            "the entry",
            scope=scope,
            name=str(path),
        )

    try:
        title = title_of(path.name)
    except UnicodeDecodeError:
        raise corrupt("its name is not a title written as %XX-escaped UTF-8") from None
    if _encoded_size(title) is None:
        raise corrupt("its name is not UTF-8, so no title can name it (rename the file)")
    if file_name(title) != path.name:
        raise corrupt(f"its name should be {file_name(title)!r} for the title {title!r}")
    meta: dict[str, str] = {}
    lines = text.replace("\r\n", "\n").split("\n")
    body = text
    if lines[0].strip() == _FENCE:
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == _FENCE), None)
        if end is None:
            raise corrupt("its front matter has no closing '---' line")
        for n, line in enumerate(lines[1:end], start=2):
            key, sep, value = line.partition(":")
            if not line.strip():
                continue
            if not sep:
                raise corrupt(f"line {n} of its front matter is not 'key: value'")
            meta[key.strip()] = value.strip()
        body = "\n".join(lines[end + 1 :])
    body = body.strip()
    if not body:
        raise corrupt("it holds no text")
    version = meta.get("version", "1")
    if not version.isdigit() or int(version) < 1:
        raise corrupt(f"its version {version!r} is not a whole number from 1")
    updated = meta.get("updated") or datetime.fromtimestamp(mtime, UTC).isoformat()
    try:
        datetime.fromisoformat(updated)
    except ValueError:
        raise corrupt(f"its updated time {updated!r} is not an ISO-8601 time") from None
    return MemoryEntry(scope, title, body, int(version), updated, meta.get("session", ""))


class FileMemoryStore:
    """A :class:`~agentkit_core.plugin.MemoryStore` over a directory of Markdown files.

    Reads list and parse files (a file unchanged since the last read, by inode, time and
    size, is not parsed again); writes take ``<dir>/.lock`` (``flock``), compare the file's
    version, write a temporary file, fsync it and rename it over the entry, so a reader never
    sees half a file and a crash leaves the old entry or the new one. Blocking calls run in a
    worker thread.
    """

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.url = url
        self._cache: dict[Path, tuple[_Stamp, MemoryEntry | CorruptMemoryEntry]] = {}
        self._indexes: dict[str, ScopeIndex] = {}  # built by the first query of each scope
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> FileMemoryStore:
        """The store of ``file:///absolute/dir`` or ``file:relative/dir``."""
        try:
            problem = _problem(urlsplit(url))
        except ValueError as exc:  # a '[' or ']' that opens no IPv6 address
            problem = f"it is no URL ({exc})"
        if problem:
            raise ConfigError(
                f"memory store URL {url!r}: {problem}; write it like 'file:///srv/app/memory' "
                "(absolute) or 'file:.agentkit/memory' (relative to the working directory)",
                value=url,
                source="file memory store",
            )
        root = Path(unquote(urlsplit(url).path))
        if root.exists() and not root.is_dir():
            raise ConfigError(
                f"memory store URL {url!r} names {str(root)!r}, which is not a directory",
                value=url,
                source="file memory store",
            )
        return cls(root, url)

    # ------------------------------------------------------------------ reading

    async def scopes(self) -> list[str]:
        """The scope directories holding at least one entry file."""
        return await self._run(self._scopes)

    async def entries(self, scope: str) -> MemoryListing:
        """Every ``*.md`` file of the scope's directory, by title; unreadable ones by path."""
        return await self._run(self._entries, scope)

    async def get(self, scope: str, title: str) -> MemoryEntry | None:
        """The entry's file, parsed; None when there is none."""
        return await self._run(self._get, scope, title)

    async def forgotten(self, scope: str, title: str) -> int:
        """The version the title was forgotten at, when it has no file now; else 0."""
        return await self._run(self._forgotten, scope, title)

    # ------------------------------------------------------------------ writing

    async def put(self, entry: MemoryEntry, expected: int) -> bool:
        """Write the entry's file if its version is ``expected`` (0: no file)."""
        return await self._run(self._put, entry, expected)

    async def delete(self, scope: str, title: str, expected: int | None) -> bool:
        """Remove the entry's file if its version is ``expected`` (None: whatever it holds).

        The version it is forgotten at goes in the scope's ``.forgotten.json`` first, so a
        crash between the two leaves the file, which wins while it is there.
        """
        return await self._run(self._delete, scope, title, expected)

    async def query(
        self, text: str, k: int, scopes: Sequence[str] | None = None
    ) -> list[MemoryHit]:
        """BM25 over each scope's entries (title words counting double), best first."""
        terms = query_terms(text)
        if not terms:
            return []
        return await self._run(self._query, terms, k, scopes)

    async def aclose(self) -> None:
        """Forget what was read; later calls raise :class:`StorageError`."""
        self._closed = True
        self._cache.clear()
        self._indexes.clear()

    def __repr__(self) -> str:
        return f"<FileMemoryStore {self.url}>"

    # ------------------------------------------------------------------ on the worker thread

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._closed:
            raise StorageError(f"the memory store {self.url} is closed; open a new one")
        try:
            return await asyncio.to_thread(fn, *args)
        except OSError as exc:
            raise StorageError(f"the memory store {self.url} failed: {exc}") from exc

    def _directory(self, scope: str) -> Path:
        """The scope's directory; :class:`ConfigError` unless it is one inside the root.

        A scope directory may be a link to another directory inside the root, never to one
        outside it (nor to the root itself).
        """
        problem = scope_problem(scope) or self._link_out(self.root / scope)
        if problem is not None:
            raise ConfigError(
                f"scope {scope!r} {problem}; a scope of the memory store {self.url} is one "
                f"plain directory name inside {str(self.root)!r}, such as 'user' or 'project'",
                value=scope,
                source="scope",
            )
        return self.root / scope

    def _link_out(self, directory: Path) -> str | None:
        """What is wrong with ``directory`` when it is a link out of the root; else None."""
        if not directory.is_symlink():
            return None
        home, real = os.path.realpath(self.root), os.path.realpath(directory)
        if real != home and Path(real).is_relative_to(home):
            return None
        return f"is a link to {real!r}, which is not inside the store's directory"

    def _scopes(self) -> list[str]:
        if not self.root.is_dir():
            return []
        found = []
        for d in sorted(os.scandir(self.root), key=lambda d: d.name):
            if d.is_dir() and not d.name.startswith("."):
                try:
                    self._directory(d.name)
                except ConfigError:  # a link out of the root: not one of this store's scopes
                    continue
                if any(n.endswith(SUFFIX) and not n.startswith(".") for n in os.listdir(d.path)):
                    found.append(d.name)
        return found

    def _entries(self, scope: str) -> MemoryListing:
        directory = self._directory(scope)
        if not directory.is_dir():
            return MemoryListing(())
        entries: list[MemoryEntry] = []
        corrupt: list[CorruptMemoryEntry] = []
        seen: set[Path] = set()
        with os.scandir(directory) as listing:
            files = [d for d in listing if d.name.endswith(SUFFIX) and not d.name.startswith(".")]
        for d in files:
            path = Path(d.path)
            try:
                found = self._read(scope, path, d.stat())
            except FileNotFoundError:  # removed since the listing
                continue
            seen.add(path)
            if isinstance(found, MemoryEntry):
                entries.append(found)
            else:
                corrupt.append(found)
        for path in list(self._cache):  # files removed since the last listing
            if path.parent == directory and path not in seen:
                self._cache.pop(path, None)
        entries.sort(key=lambda e: e.title)
        corrupt.sort(key=lambda c: c.name)
        return MemoryListing(tuple(entries), tuple(corrupt))

    def _read(self, scope: str, path: Path, st: os.stat_result) -> MemoryEntry | CorruptMemoryEntry:
        stamp = _stamp(st)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found: MemoryEntry | CorruptMemoryEntry
        try:
            text = path.read_bytes().decode("utf-8")
            found = parse_file(scope, path, text, st.st_mtime)
        except UnicodeDecodeError as exc:
            found = CorruptMemoryEntry(
                f"memory file {str(path)!r} cannot be read: it is not UTF-8 text ({exc.reason} "
                f"at byte {exc.start}); fix it by hand, or forget the entry",
                scope=scope,
                name=str(path),
            )
        except CorruptMemoryEntry as exc:
            found = exc
        self._cache[path] = (stamp, found)
        return found

    def _query(self, terms: list[str], k: int, scopes: Sequence[str] | None) -> list[MemoryHit]:
        indexes = []
        # a scope named twice is searched once: its entries would otherwise rank twice
        for scope in self._scopes() if scopes is None else dict.fromkeys(scopes):
            entries = self._entries(scope).entries
            index = self._indexes.get(scope)
            if index is None or not index.fresh(entries):
                index = self._indexes[scope] = ScopeIndex.build(entries)
            indexes.append(index)
        return [MemoryHit(e, score, self.url) for score, e in rank(indexes, terms, k)]

    def _path(self, scope: str, title: str) -> Path:
        problem = title_problem(title)
        if problem is not None:
            raise ConfigError(
                f"title {title!r} {problem}; a title of the memory store {self.url} is one "
                "line of text naming a file of its own: use another title",
                value=title,
                source="title",
            )
        return self._directory(scope) / file_name(title)

    def _current(self, scope: str, path: Path) -> MemoryEntry | CorruptMemoryEntry | None:
        try:
            return self._read(scope, path, path.stat())
        except FileNotFoundError:
            return None

    def _get(self, scope: str, title: str) -> MemoryEntry | None:
        found = self._current(scope, self._path(scope, title))
        if isinstance(found, CorruptMemoryEntry):
            raise found
        return found

    def _forgotten(self, scope: str, title: str) -> int:
        path = self._path(scope, title)
        if path.exists():
            return 0
        return _forgotten_at(path.parent).get(title, 0)

    def _locked(self) -> int:
        create_private(self.root, directory=True)  # a new one, and those above it: 0700
        # never through a link: opening it would create its target, wherever that is
        fd = os.open(self.root / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def _put(self, entry: MemoryEntry, expected: int) -> bool:
        path = self._path(entry.scope, entry.title)
        fd = self._locked()
        try:
            current = self._current(entry.scope, path)
            stored = _version(current)
            if current is None:
                stored = _forgotten_at(path.parent).get(entry.title, 0)
            if stored != expected:
                return False
            create_private(path.parent, directory=True)
            _write_durably(path, render_file(entry))
            self._cache[path] = (_stamp(path.stat()), entry)
            self._indexes.pop(entry.scope, None)  # the next query indexes the scope again
            return True
        finally:
            os.close(fd)  # closing releases the lock

    def _delete(self, scope: str, title: str, expected: int | None) -> bool:
        path = self._path(scope, title)
        fd = self._locked()
        try:
            current = self._current(scope, path)
            if current is None:
                return False
            if expected is not None and _version(current) != expected:
                return False
            forgotten = _forgotten_at(path.parent)
            forgotten[title] = max(_version(current), 0) + 1
            _write_durably(path.parent / FORGOTTEN, json.dumps(forgotten, ensure_ascii=False))
            path.unlink()
            _sync_dir(path.parent)
            self._cache.pop(path, None)
            self._indexes.pop(scope, None)
            return True
        finally:
            os.close(fd)


def _version(found: MemoryEntry | CorruptMemoryEntry | None) -> int:
    """The stored version: 0 for no file, -1 for one that cannot be read (matches nothing)."""
    if found is None:
        return 0
    return found.version if isinstance(found, MemoryEntry) else -1


def _forgotten_at(directory: Path) -> dict[str, int]:
    """The scope's record of forgotten titles; an unreadable record counts as empty."""
    try:
        found = json.loads((directory / FORGOTTEN).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if type(v) is int and v > 0}


def _write_durably(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file, fsynced and renamed over it.

    A new file is its owner's only (0600): it holds an entry; one that was there keeps its
    mode (the temporary file takes it before the rename), so a mode its owner chose stays.
    """
    temp = path.parent / f".{secrets.token_hex(8)}.tmp"
    try:
        create_private(temp)
        with open(temp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        _keep_mode(path, temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _sync_dir(path.parent)


def _keep_mode(path: Path, temp: Path) -> None:
    """Give ``temp`` the mode of the file at ``path``, when there is one and the system allows."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    with contextlib.suppress(OSError, NotImplementedError):  # else it stays 0600
        os.chmod(temp, mode)


def _sync_dir(directory: Path) -> None:
    """Make a rename or removal in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _problem(parts: SplitResult) -> str:
    """What is wrong with a files store's URL, split; "" when nothing is."""
    if parts.scheme != "file":
        return f"the scheme must be file, not {parts.scheme!r}"
    if parts.netloc not in ("", "localhost"):
        return f"it names the host {parts.netloc!r}; a memory directory is local"
    if parts.query or parts.fragment:
        return "the files store takes no options"
    path = unquote(parts.path)
    if not path:
        return "it names no directory"
    if "\x00" in path:
        return "its path holds a NUL character, which no directory name can"
    return ""
