"""``SkillsOptions``, made when first read, not when the plugin loads."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import TypedDict

if TYPE_CHECKING:  # the instruction-part records load when skills are read, not here
    from pathlib import Path  # imported by Skills(): a first run only registers the factory

    from ._skill import Skill


class SkillsOptions(TypedDict, total=False):
    """The options of ``skills`` (``Kit(parts={"skills": {...}})``), checked at lookup."""

    #: Skill directories, each of which must exist; searched in order.
    dirs: Sequence[str | Path]
    #: Skill directories searched after ``dirs``; a missing one is passed over.
    optional_dirs: Sequence[str | Path]
    #: Whether the ``read_skill`` tool is offered (default true).
    offer_tool: bool
    #: Whether a skill's ``allowed-tools`` may grant: true, false (the default) or a function
    #: of the skill (code only).
    trusted: bool | Callable[[Skill], bool]
    #: A SKILL.md over this many bytes is left out whole (default 65536).
    max_file_bytes: int
