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
        if self.root != self.path and self.root not in self.path.parents:
            raise ConfigError(
                f"agentsmd root {str(self.root)!r} is not above path {str(self.path)!r}; the "
                "chain is read from the root down to the path",
                value=str(root),
                source="agentsmd root=",
            )
        if not names:
            raise ConfigError("agentsmd names= is empty; give at least one file name")
        self.names = tuple(names)
        self.extra = tuple(_resolved(p, "extra") for p in extra)
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
            present = [directory / n for n in self.names if _there((directory / n).is_file)]
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
            files.append(_File(path, path.read_text(encoding="utf-8", errors="replace")))
        return files, skipped

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
