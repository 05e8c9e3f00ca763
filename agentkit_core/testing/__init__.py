"""Test doubles and conformance suites for agentkit and its plugins.

A plugin's tests import from here: the doubles (``ScriptedModel``, ``make_test_ctx``) and, per
seam, a conformance suite that every implementation of the seam runs.
"""

from .._test_model import TestModel
from ._context import DictStore
from ._context import make_test_ctx
from ._guardrails import GuardrailConformance
from ._model_conformance import ModelConformance
from ._models import ScriptedModel
from ._models import Step
from ._models import tool_call
from ._schema import SchemaAdapterConformance
from ._schema import report_documents


def __getattr__(name: str) -> object:
    # The conformance suites need hypothesis or pytest; import them only when a test asks.
    if name in ("CompactorConformance", "check_compaction_invariants", "transcripts"):
        from . import _compactors

        return {
            "CompactorConformance": _compactors.CompactorConformance,
            "check_compaction_invariants": _compactors.check_invariants,
            "transcripts": _compactors.transcripts,
        }[name]
    if name == "CheckpointPortConformance":
        from ._checkpoints import CheckpointPortConformance

        return CheckpointPortConformance
    if name in ("SessionStoreConformance", "SessionStoreProcessConformance"):
        from . import _sessions

        return getattr(_sessions, name)
    if name == "RecorderProcessConformance":
        from ._recorder_processes import RecorderProcessConformance

        return RecorderProcessConformance
    if name == "InstructionPartConformance":
        from ._instruction_parts import InstructionPartConformance

        return InstructionPartConformance
    if name == "ToolSourceConformance":
        from ._tool_sources import ToolSourceConformance

        return ToolSourceConformance
    raise AttributeError(f"module 'agentkit_core.testing' has no attribute {name!r}")


__all__ = [
    "CheckpointPortConformance",
    "CompactorConformance",
    "DictStore",
    "GuardrailConformance",
    "InstructionPartConformance",
    "ModelConformance",
    "RecorderProcessConformance",
    "SchemaAdapterConformance",
    "ScriptedModel",
    "SessionStoreConformance",
    "SessionStoreProcessConformance",
    "Step",
    "TestModel",
    "ToolSourceConformance",
    "check_compaction_invariants",
    "make_test_ctx",
    "report_documents",
    "tool_call",
    "transcripts",
]
