"""AgentsMD passes the instruction-part conformance suite over a real directory chain."""

from __future__ import annotations

from pathlib import Path

from agentkit_instructions_agentsmd import AgentsMD

from agentkit_core.plugin import PartSource
from agentkit_core.testing import InstructionPartConformance


class TestAgentsMDConformance(InstructionPartConformance):
    def make_source(self, tmp_path: Path) -> PartSource:
        (tmp_path / "AGENTS.md").write_text("Règles générales : tests d'abord.", encoding="utf-8")
        (tmp_path / "CLAUDE.md").write_text("shadowed rules", encoding="utf-8")
        leaf = tmp_path / "pkg" / "mod"
        leaf.mkdir(parents=True)
        (tmp_path / "pkg" / "AGENTS.md").write_text("pkg: keep imports light ✓", encoding="utf-8")
        (leaf / "AGENTS.md").write_text("mod: no network in unit tests", encoding="utf-8")
        return AgentsMD(leaf, root=tmp_path, names=("AGENTS.md", "CLAUDE.md"))
