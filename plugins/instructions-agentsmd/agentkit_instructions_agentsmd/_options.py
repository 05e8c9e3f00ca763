"""``AgentsMDOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import TypedDict

if TYPE_CHECKING:  # the instruction-part records load when a kit reads the files, not here
    from pathlib import Path  # imported by AgentsMD(): a first run only registers the factory


class AgentsMDOptions(TypedDict, total=False):
    """The options of ``agentsmd`` (``Kit(parts={"agentsmd": {...}})``), checked at lookup."""

    #: The path whose chain applies (default: the working directory).
    path: str | Path
    #: The directory the chain starts from (default: the filesystem root).
    root: str | Path | None
    #: The file names tried in each directory, in order (default ``["AGENTS.md"]``).
    names: Sequence[str]
    #: Files appended after the chain.
    extra: Sequence[str | Path]
    #: A file over this many bytes is left out whole (default 32768).
    max_file_bytes: int
    #: The bytes of the whole chain; the files nearest the root go first (default 65536).
    max_total_bytes: int
