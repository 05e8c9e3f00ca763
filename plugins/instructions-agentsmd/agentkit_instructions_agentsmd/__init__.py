"""The AGENTS.md chain that applies at a path, as the ``agentsmd`` instruction part.

From the root given down to the path, each directory may hold an instructions file (the first
of ``names`` found there; the others it shadows are reported). Deeper files are more specific,
so they come last and, when a bound forces a choice, they are the ones kept.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from agentkit_core import ConfigError
from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:  # the instruction-part records load when a kit reads the files, not here
    from pathlib import Path  # imported by AgentsMD(): a first run only registers the factory

    from agentkit_core import Tool
    from agentkit_core.plugin import InstructionPartFactory
    from agentkit_core.plugin import Omission
    from agentkit_core.plugin import Register
    from agentkit_core.plugin import Rendered

    from ._options import AgentsMDOptions as AgentsMDOptions

__all__ = ["PART_ID", "AgentsMD", "AgentsMDOptions"]

PART_ID = "agentsmd"
SOURCE = "agentsmd"


class _File:
    """One instructions file of the chain, read.

    A plain class: a frozen dataclass compiles six methods at import (a first run's cost)
    that nothing here calls.
    """

    __slots__ = ("path", "text")

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text

    @property
    def block(self) -> str:
        return f"# From {self.path}\n\n{self.text.strip()}"


class AgentsMD:
    """The AGENTS.md chain at ``path``, from ``root`` (default: the filesystem root) down.

    ``names`` are tried in order in each directory; ``extra`` files are appended after the
    chain. A file over ``max_file_bytes`` is left out whole; when the chain is over
    ``max_total_bytes`` (or the kit's budget, whichever is smaller) the files nearest the root
    are left out first. Everything left out is reported as an omission.
    """

    id = PART_ID
    source = SOURCE
    shrinkable = True
    tools: Sequence[Tool] = ()

    def __init__(
        self,
        path: str | Path = ".",
        *,
        root: str | Path | None = None,
        names: Sequence[str] = ("AGENTS.md",),
        extra: Sequence[str | Path] = (),
        max_file_bytes: int = 32 * 1024,
        max_total_bytes: int = 64 * 1024,
    ) -> None:
        from pathlib import Path

        self.path = _resolved(path, "path")
        if not _there(self.path.exists):
            raise ConfigError(
                f"agentsmd path {str(self.path)!r} does not exist; pass the directory the "
                "agent works in",
                value=str(path),
                source="agentsmd path=",
            )
        if _there(self.path.is_file):
            self.path = self.path.parent
        self.root = _resolved(root, "root") if root is not None else Path(self.path.anchor)
        self._rooted = root is not None
        if self.root != self.path and self.root not in self.path.parents:
            raise ConfigError(
                f"agentsmd root {str(self.root)!r} is not above path {str(self.path)!r}; the "
                "chain is read from the root down to the path",
                value=str(root),
                source="agentsmd root=",
            )
        if not names:
            raise ConfigError("agentsmd names= is empty; give at least one file name")
        for name in names:
            if (
                not isinstance(name, str)
                or name in ("", ".", "..")
                or any(c in name for c in "/\\\0")
            ):
                raise ConfigError(
                    f"agentsmd names= holds {name!r}, which is not a file name; give names "
                    "such as 'AGENTS.md' (a file read from elsewhere goes in extra=)",
                    value=name,
                    source="agentsmd names=",
                )
        self.names = tuple(names)
        self.extra = tuple(_resolved(p, "extra") for p in extra)
        for option, bound in (
            ("max_file_bytes", max_file_bytes),
            ("max_total_bytes", max_total_bytes),
        ):
            if isinstance(bound, bool) or not isinstance(bound, int) or bound < 0:
                raise ConfigError(
                    f"agentsmd {option}={bound!r} is not a number of bytes; give a whole "
                    "number, 0 or more",
                    value=bound,
                    source=f"agentsmd {option}=",
                )
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self._files, self._skipped = self._read()

    def _chain_dirs(self) -> list[Path]:
        dirs = [self.path, *self.path.parents]
        return list(reversed(dirs[: dirs.index(self.root) + 1]))

    def _read(self) -> tuple[list[_File], list[Omission]]:
        from agentkit_core.plugin import Omission

        files: list[_File] = []
        skipped: list[Omission] = []
        candidates: list[Path] = []
        for directory in self._chain_dirs():
            present = [directory / n for n in self.names if self._found(directory / n)]
            if not present:
                continue
            candidates.append(present[0])
            for shadowed in present[1:]:
                skipped.append(
                    Omission(
                        PART_ID,
                        SOURCE,
                        str(shadowed),
                        "shadowed",
                        _bytes(shadowed),
                        str(present[0]),
                    )
                )
        for path in self.extra:
            if not _there(path.is_file):
                raise ConfigError(
                    f"agentsmd extra file {str(path)!r} does not exist",
                    value=str(path),
                    source="agentsmd extra=",
                )
            candidates.append(path)
        for path in candidates:
            size = _bytes(path)
            if size > self.max_file_bytes:
                skipped.append(Omission(PART_ID, SOURCE, str(path), "over max_file_bytes", size))
                continue
            text = self._text(path)
            if text is None:
                skipped.append(
                    Omission(PART_ID, SOURCE, str(path), "over max_file_bytes", _bytes(path))
                )
                continue
            files.append(_File(path, text))
        return files, skipped

    def _found(self, path: Path) -> bool:
        """Whether the chain has an instructions file at ``path``; an error for one it cannot use.

        A link must lead to a regular file under the root: a repository's ``AGENTS.md`` linked
        to ``~/.ssh/id_rsa`` or ``/proc/self/environ`` would send it to the model provider. A
        directory, a FIFO or a broken link under the name is an error too, not a silent gap.
        """
        if not _there(path.is_symlink) and not _there(path.exists):
            return False
        try:
            target = path.resolve()
        except (OSError, ValueError, RuntimeError):  # a loop of links
            target = None
        inside = self.root if self._rooted else path.parent
        if target is not None and _there(path.is_symlink):
            if inside != target and inside not in target.parents:
                raise ConfigError(
                    f"agentsmd: {str(path)!r} links to {str(target)!r}, outside "
                    f"{str(inside)!r}; a link may lead only to a file under the root= given "
                    "(or, without one, under its own directory): copy the file into the tree, "
                    "or give a root= above both",
                    value=str(path),
                    source="agentsmd root=",
                )
        if target is None or not _there(path.is_file):
            raise ConfigError(
                f"agentsmd: {str(path)!r} is not a regular file (a directory, a FIFO or a link "
                "to nothing); make it the instructions file or remove it",
                value=str(path),
                source="agentsmd names=",
            )
        return True

    def _text(self, path: Path) -> str | None:
        """The file's text (a UTF-8 BOM dropped); None when it is over ``max_file_bytes``.

        At most ``max_file_bytes`` + 1 bytes are read: a file that grew since it was measured,
        or one whose size the system does not report, is bounded all the same.
        """
        try:
            with path.open("rb") as f:
                data = f.read(self.max_file_bytes + 1)
        except OSError as exc:
            raise ConfigError(
                f"agentsmd: {str(path)!r} cannot be read ({exc.strerror or exc}); give the "
                "agent read access to it, or remove it",
                value=str(path),
                source=str(path),
            ) from None
        if len(data) > self.max_file_bytes:
            return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"agentsmd: {str(path)!r} is not UTF-8 text (byte {data[exc.start]:#04x} at "
                f"offset {exc.start}); save it as UTF-8",
                value=str(path),
                source=str(path),
            ) from None

    def render(self, max_bytes: int | None) -> Rendered:
        """The chain's text within the bound, the files left out as omissions."""
        from agentkit_core.plugin import Omission
        from agentkit_core.plugin import Rendered

        bound = self.max_total_bytes if max_bytes is None else min(max_bytes, self.max_total_bytes)
        kept: list[_File] = []
        used = 0
        omissions = list(self._skipped)
        for f in reversed(self._files):  # the deepest file has the last word: keep it first
            cost = len(f.block.encode("utf-8")) + (2 if kept else 0)
            if used + cost > bound:
                reason = "over max_total_bytes" if bound == self.max_total_bytes else "over budget"
                omissions.append(Omission(PART_ID, SOURCE, str(f.path), reason, len(f.text)))
                continue
            kept.append(f)
            used += cost
        text = "\n\n".join(f.block for f in reversed(kept))
        return Rendered(text, tuple(omissions))


def _resolved(value: str | Path, option: str) -> Path:
    """``value`` made absolute; a ConfigError naming ``option`` for what no path can be."""
    from pathlib import Path

    try:
        return Path(value).resolve()
    except (OSError, ValueError) as exc:  # a NUL byte, a loop of links
        raise ConfigError(
            f"agentsmd {option}={str(value)!r} is not a usable path ({exc}); give a directory's "
            "path",
            value=str(value),
            source=f"agentsmd {option}=",
        ) from exc


def _there(check: Callable[[], bool]) -> bool:
    """``path.exists``, ``is_file`` and the like, False for a name the system refuses.

    pathlib answers False for a missing file but raises for a name too long to look up.
    """
    try:
        return check()
    except (OSError, ValueError):
        return False


def _bytes(path: Path) -> int:
    return path.stat().st_size


@hookimpl
def agentkit_register_instruction_parts(register: Register[InstructionPartFactory]) -> None:
    """Offer the ``agentsmd`` part."""
    register(PART_ID, AgentsMD, settings=partial(__getattr__, "AgentsMDOptions"))


__getattr__ = lazy_attributes(__name__, {"AgentsMDOptions": "._options"})
