"""A discovered skill's record, imported when skills are first read (see the package)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Skill:
    """One discovered skill: its name, description, body and where its SKILL.md is.

    ``allowed_tools`` are the entries of its ``allowed-tools`` front matter; ``digest`` is a
    SHA-256 over its SKILL.md and every other file in its directory (names and contents), so a
    grant made when it was read is made again after a restart only if none of it changed.
    """

    name: str
    description: str
    body: str
    location: str
    allowed_tools: tuple[str, ...] = ()
    digest: str = ""

    @property
    def line(self) -> str:
        """The skill's catalogue line."""
        return f"- {self.name}: {self.description}"


Skill.__module__ = __name__.rpartition(".")[0]  # shown and pickled under its public path
