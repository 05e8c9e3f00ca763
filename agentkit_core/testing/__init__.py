"""Test doubles and conformance suites for agentkit and its plugins.

A plugin's tests import from here: the doubles (``ScriptedModel``, ``make_test_ctx``) and, per
seam, a conformance suite that every implementation of the seam runs.
"""

from typing import TYPE_CHECKING

from .._public import publish
from .._test_model import TestModel
from ._context import DictStore
from ._context import make_test_ctx
from ._models import ScriptedModel
from ._models import Step
from ._models import tool_call

if TYPE_CHECKING:  # imported on first use at run time (below); typed as what they are
    from ._checkpoints import CheckpointPortConformance
    from ._commands import CommandConformance
    from ._compactors import CompactorConformance
    from ._compactors import check_invariants as check_compaction_invariants
    from ._compactors import check_sendable
    from ._compactors import transcripts
    from ._executors import ExecutorConformance
    from ._guardrails import GuardrailConformance
    from ._guards import GuardConformance
    from ._instruction_parts import InstructionPartConformance
    from ._json import json_values
    from ._mcp_tokens import MCPTokenStoreConformance
    from ._memory import MemoryStoreConformance
    from ._memory import MemoryStoreProcessConformance
    from ._model_conformance import ModelConformance
    from ._policy import PolicyEngineConformance
    from ._prices import PriceSourceConformance
    from ._recorder_processes import RecorderProcessConformance
    from ._schema import SchemaAdapterConformance
    from ._schema import report_documents
    from ._servers import ServerConformance
    from ._session_processes import SessionStoreProcessConformance
    from ._sessions import SessionStoreConformance
    from ._span_exporters import SpanExporterConformance
    from ._tool_calls import run_tool_calls
    from ._tool_calls import split_at
    from ._tool_calls import streamed_tool_calls
    from ._tool_sources import ToolSourceConformance
    from ._wire_server import Reply
    from ._wire_server import WireServer
    from ._wire_server import sse_events

#: The names imported on first use, and where: the conformance suites need hypothesis or
#: pytest, which a plugin's runtime must not pay for, and a script that only wants a
#: ``ScriptedModel`` need not build every suite's classes.
_LAZY = {
    "GuardrailConformance": ("_guardrails", "GuardrailConformance"),
    "ModelConformance": ("_model_conformance", "ModelConformance"),
    "SchemaAdapterConformance": ("_schema", "SchemaAdapterConformance"),
    "report_documents": ("_schema", "report_documents"),
    "ServerConformance": ("_servers", "ServerConformance"),
    "CheckpointPortConformance": ("_checkpoints", "CheckpointPortConformance"),
    "CommandConformance": ("_commands", "CommandConformance"),
    "CompactorConformance": ("_compactors", "CompactorConformance"),
    "ExecutorConformance": ("_executors", "ExecutorConformance"),
    "GuardConformance": ("_guards", "GuardConformance"),
    "InstructionPartConformance": ("_instruction_parts", "InstructionPartConformance"),
    "PolicyEngineConformance": ("_policy", "PolicyEngineConformance"),
    "PriceSourceConformance": ("_prices", "PriceSourceConformance"),
    "MCPTokenStoreConformance": ("_mcp_tokens", "MCPTokenStoreConformance"),
    "MemoryStoreConformance": ("_memory", "MemoryStoreConformance"),
    "MemoryStoreProcessConformance": ("_memory", "MemoryStoreProcessConformance"),
    "RecorderProcessConformance": ("_recorder_processes", "RecorderProcessConformance"),
    "SessionStoreConformance": ("_sessions", "SessionStoreConformance"),
    "SessionStoreProcessConformance": ("_session_processes", "SessionStoreProcessConformance"),
    "SpanExporterConformance": ("_span_exporters", "SpanExporterConformance"),
    "ToolSourceConformance": ("_tool_sources", "ToolSourceConformance"),
    "run_tool_calls": ("_tool_calls", "run_tool_calls"),
    "split_at": ("_tool_calls", "split_at"),
    "streamed_tool_calls": ("_tool_calls", "streamed_tool_calls"),
    "check_compaction_invariants": ("_compactors", "check_invariants"),
    "check_sendable": ("_compactors", "check_sendable"),
    "transcripts": ("_compactors", "transcripts"),
    "Reply": ("_wire_server", "Reply"),
    "WireServer": ("_wire_server", "WireServer"),
    "sse_events": ("_wire_server", "sse_events"),
    "json_values": ("_json", "json_values"),
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'agentkit_core.testing' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    obj = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    publish([name], {name: obj}, __name__)
    globals()[name] = obj
    return obj


__all__ = [
    "CheckpointPortConformance",
    "CommandConformance",
    "CompactorConformance",
    "DictStore",
    "ExecutorConformance",
    "GuardConformance",
    "GuardrailConformance",
    "InstructionPartConformance",
    "MCPTokenStoreConformance",
    "MemoryStoreConformance",
    "MemoryStoreProcessConformance",
    "ModelConformance",
    "PolicyEngineConformance",
    "PriceSourceConformance",
    "RecorderProcessConformance",
    "Reply",
    "SchemaAdapterConformance",
    "ScriptedModel",
    "ServerConformance",
    "SessionStoreConformance",
    "SessionStoreProcessConformance",
    "SpanExporterConformance",
    "Step",
    "TestModel",
    "ToolSourceConformance",
    "WireServer",
    "check_compaction_invariants",
    "check_sendable",
    "json_values",
    "make_test_ctx",
    "report_documents",
    "run_tool_calls",
    "split_at",
    "sse_events",
    "streamed_tool_calls",
    "tool_call",
    "transcripts",
]

publish([n for n in __all__ if n not in _LAZY], globals(), __name__)
