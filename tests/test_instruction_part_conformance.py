"""TextPart, the core's fixed part, passes the instruction-part conformance suite."""

from __future__ import annotations

from pathlib import Path

from agentkit_core import TextPart
from agentkit_core.plugin import PartSource
from agentkit_core.testing import InstructionPartConformance


class TestTextPartConformance(InstructionPartConformance):
    def make_source(self, tmp_path: Path) -> PartSource:
        return TextPart("You are a careful assistant. Soyez précis ✓.")


class TestNamedTextPartConformance(InstructionPartConformance):
    def make_source(self, tmp_path: Path) -> PartSource:
        return TextPart("Memory: the user prefers tabs.", id="memory", source="memory-file")
