"""Test doubles and conformance suites for agentkit and its plugins.

A plugin's tests import from here: the doubles (``ScriptedModel``, ``make_test_ctx``) and, per
seam, a conformance suite that every implementation of the seam runs.
"""

from ._context import make_test_ctx
from ._guardrails import GuardrailConformance
from ._models import ScriptedModel
from ._models import Step
from ._models import TestModel
from ._models import tool_call
from ._schema import SchemaAdapterConformance
from ._schema import report_documents

__all__ = [
    "SchemaAdapterConformance",
    "report_documents",
    "GuardrailConformance",
    "ScriptedModel",
    "Step",
    "TestModel",
    "make_test_ctx",
    "tool_call",
]
