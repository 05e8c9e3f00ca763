"""Skills passes the instruction-part conformance suite over real SKILL.md directories."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentkit_instructions_skills import Skills

from agentkit_core.plugin import PartSource
from agentkit_core.testing import InstructionPartConformance


def write_skill(root: Path, name: str, description: str) -> None:
    (root / name).mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\nSteps for {name}.\n"
    (root / name / "SKILL.md").write_text(text, encoding="utf-8")


class TestSkillsConformance(InstructionPartConformance):
    reloadable = True

    def make_source(self, tmp_path: Path) -> PartSource:
        for i, description in enumerate(["Cut a release", "Écrire la doc — proprement", "Triage"]):
            write_skill(tmp_path / "skills", f"skill{i}", description)
        (tmp_path / "skills" / "broken").mkdir()
        (tmp_path / "skills" / "broken" / "SKILL.md").write_text("no front matter")
        return Skills([tmp_path / "skills"])

    def spoil(self, tmp_path: Path) -> None:
        shutil.rmtree(tmp_path / "skills")  # a required directory gone: reload() raises


class TestSkillsWithoutToolConformance(InstructionPartConformance):
    reloadable = True

    def make_source(self, tmp_path: Path) -> PartSource:
        write_skill(tmp_path, "deploy", "Ship it")
        return Skills(optional_dirs=[tmp_path, tmp_path / "absent"], offer_tool=False)
