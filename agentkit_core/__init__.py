"""agentkit: a small agent loop whose every capability is a pluggy plugin.

The public API is what this module exports; everything in ``agentkit_core._*`` is private.
Plugin authors need only ``import agentkit_core`` (and ``agentkit_core.testing`` in tests).
One import per line, sorted; ``__all__`` sorted.
"""

from ._agent import Agent
from ._agent import AgentResult
from ._agent import RunState
from ._agent_tool import AgentTool
from ._agent_tool import agent_tool
from ._checkpoint import DONE
from ._checkpoint import FAILED
from ._checkpoint import RUNNING
from ._checkpoint import SUSPENDED
from ._checkpoint import TAINTED
from ._checkpoint import Checkpoint
from ._checkpoint import Checkpointer
from ._checkpoint import CheckpointPort
from ._checkpoint import KeyValueStore
from ._checkpoint import StoreBridge
from ._checkpoint import StoredCheckpoint
from ._checkpoint import resolve_checkpointer
from ._compaction import Compactor
from ._compaction import compaction
from ._config import PluginConfig
from ._config import read_kit_options
from ._context import DEFAULT_MODEL_DEADLINE
from ._context import Budget
from ._context import Elicitor
from ._context import Invoker
from ._context import RunContext
from ._context import Scratchpad
from ._discovery import PluginInfo
from ._encoder import decode_state
from ._encoder import encode_state
from ._errors import AgentkitError
from ._errors import BudgetExceeded
from ._errors import ConfigError
from ._errors import CorruptMemoryEntry
from ._errors import CorruptSessionItem
from ._errors import DecodingError
from ._errors import ElicitationError
from ._errors import EncodingError
from ._errors import FoldError
from ._errors import GuardBlocked
from ._errors import GuardrailViolation
from ._errors import HookError
from ._errors import HookTimeoutError
from ._errors import MaxTurnsExceeded
from ._errors import MemoryConflict
from ._errors import ModelDeadlineExceeded
from ._errors import OutputValidationError
from ._errors import ParseError
from ._errors import PendingToolCallError
from ._errors import PluginConflictError
from ._errors import PluginError
from ._errors import PluginLoadError
from ._errors import PluginOrderError
from ._errors import ProviderError
from ._errors import ProviderHTTPError
from ._errors import ProviderResponseError
from ._errors import RunError
from ._errors import SecretTaintError
from ._errors import SessionConflict
from ._errors import SessionNotFound
from ._errors import SlowHookWarning
from ._errors import StorageError
from ._errors import ToolDefinitionError
from ._errors import ToolSourceError
from ._errors import ToolTimeoutError
from ._errors import UnknownNameError
from ._errors import UnsupportedTypeError
from ._errors import UsageError
from ._errors import VersionConflict
from ._evaluator import Evaluator
from ._fold import SUMMARY
from ._fold import SUMMARY_HEADER
from ._fold import SUMMARY_INSTRUCTIONS
from ._fold import Fold
from ._fold import Folding
from ._fold import FoldObserver
from ._fold import Summarizer
from ._fold import fold_cut
from ._fold import render_transcript
from ._fold import write_summary
from ._guardrails import Guardrail
from ._guardrails import egress
from ._guards import GUARD_NAMESPACE
from ._guards import ChainedGuard
from ._guards import Guard
from ._guards import GuardChain
from ._guards import GuardDecision
from ._guards import GuardInput
from ._guards import build_guard_chain
from ._hooks import Hooks
from ._hooks import StopDecision
from ._hooks import ToolDecision
from ._hooks import TurnInfo
from ._instructions import DEFAULT_ORDER
from ._instructions import SEPARATOR
from ._instructions import InstructionPart
from ._instructions import Instructions
from ._instructions import LiveInstructions
from ._instructions import LivePartSource
from ._instructions import Omission
from ._instructions import PartSource
from ._instructions import ReloadablePartSource
from ._instructions import Rendered
from ._instructions import TextPart
from ._instructions import compose_instructions
from ._instructions import order_sources
from ._invoke import default_middlewares
from ._invoke import metering
from ._invoke import retry
from ._invoke import tracing
from ._kit import AgentConfig
from ._kit import Kit
from ._kit import KitOptions
from ._kit import kit_compaction
from ._kit import kit_guardrail
from ._kit import kit_guards
from ._kit import kit_hooks
from ._kit import kit_memory
from ._kit import kit_middlewares
from ._lookup import adapt
from ._lookup import get_compactor
from ._lookup import get_guard
from ._lookup import get_guardrail
from ._lookup import get_instruction_part
from ._lookup import get_tool_source
from ._lookup import load_policy
from ._lookup import open_checkpoint_store
from ._lookup import open_memory_store
from ._lookup import open_session_store
from ._lookup import resolve_model
from ._lookup import resolve_policy
from ._lookup import span_exporters
from ._memory import ENTRY_COLUMNS
from ._memory import EntryRows
from ._memory import Memory
from ._memory import MemoryEntry
from ._memory import MemoryListing
from ._memory import MemoryStore
from ._memory import stored_entry
from ._memory_block import MemoryBlock
from ._memory_block import MemoryManifest
from ._memory_block import MemoryOptions
from ._messages import Message
from ._messages import ToolCall
from ._messages import Usage
from ._middleware import Middleware
from ._middleware import ToolInvocation
from ._middleware import as_middleware
from ._models import Model
from ._models import ModelRequest
from ._models import ModelResponse
from ._models import ModelSettings
from ._models import OutputSchema
from ._models import StreamEvent
from ._models import ToolSpec
from ._output import OutputCoerce
from ._output import OutputStream
from ._output import PartialCache
from ._output import PartialParsing
from ._output import SchemaAdapter
from ._output import bare_instance
from ._output import decode_json
from ._output import error_line
from ._output import import_optional
from ._output import output_coerce
from ._output import stream_partials
from ._output import strict_json_schema
from ._output import strip_code_fence
from ._output import structure
from ._output import supports_structured_output
from ._partial import PartialJSONParser
from ._partial import partial_json
from ._plugins import PluginManager
from ._plugins import Registration
from ._plugins import get_plugin_manager
from ._plugins import reset_plugin_manager
from ._policy import Approval
from ._policy import Deferred
from ._policy import Grant
from ._policy import Grantor
from ._policy import GrantReport
from ._policy import PolicyEngine
from ._policy import grant_scope
from ._postgres import POSTGRES_OPTIONS
from ._postgres import PostgresPool
from ._public import publish as _publish
from ._recorder import NullRecorder
from ._recorder import PartsFor
from ._recorder import Recorder
from ._redaction import PII_DETECTORS
from ._redaction import Detector
from ._redaction import Redacted
from ._redaction import iban_valid
from ._redaction import luhn_valid
from ._redaction import redact_pii
from ._requests import BuiltRequest
from ._requests import Grounder
from ._requests import GroundingAdmit
from ._requests import GroundingRender
from ._requests import GroundingSource
from ._requests import MemoryItem
from ._requests import Prompt
from ._requests import RequestBuilder
from ._requests import WorkingContext
from ._requests import render_grounding
from ._session_state import REASONING
from ._session_state import RecordedInstructions
from ._session_state import SessionState
from ._session_state import strip_reasoning
from ._sessions import ITEM_KINDS
from ._sessions import SESSION_SCHEMA
from ._sessions import NewItem
from ._sessions import SessionHeader
from ._sessions import SessionInfo
from ._sessions import SessionItem
from ._sessions import Sessions
from ._sessions import SessionStore
from ._sqlite import SQLITE_DEFAULTS
from ._sqlite import SqliteFile
from ._sqlite import parse_sqlite_url
from ._tokens import Estimator
from ._tokens import estimate_message
from ._tokens import estimate_tokens
from ._tools import FunctionTool
from ._tools import Tool
from ._tools import ToolResult
from ._tools import tool
from ._toolsource import ToolSource
from ._toolunion import CompositeToolSource
from ._toolunion import DynamicToolSource
from ._toolunion import ToolConflict
from ._toolunion import ToolConflictError
from ._toolunion import ToolOrigin
from ._toolunion import ToolSourceBridge
from ._toolunion import ToolUnion
from ._trace_file import TraceFile
from ._trace_file import read_trace_file
from ._tracing import Span
from ._tracing import SpanExporter
from ._tracing import Trace
from ._tracing import current_span
from ._tracing import jsonable
from ._units import Repair
from ._units import Unit
from ._units import compaction_units
from ._units import keep_units
from ._units import pending_calls
from ._units import recent_units
from ._units import repair_transcript
from ._units import units_from_end
from ._units import within_budget
from ._urls import mask_url
from ._verdicts import Verdict
from ._verdicts import VerdictObserver
from ._verdicts import report_verdict
from .hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MODEL_DEADLINE",
    "DEFAULT_ORDER",
    "DONE",
    "ENTRY_COLUMNS",
    "FAILED",
    "GUARD_NAMESPACE",
    "ITEM_KINDS",
    "PII_DETECTORS",
    "POSTGRES_OPTIONS",
    "REASONING",
    "RUNNING",
    "SEPARATOR",
    "SESSION_SCHEMA",
    "SQLITE_DEFAULTS",
    "SUMMARY",
    "SUMMARY_HEADER",
    "SUMMARY_INSTRUCTIONS",
    "SUSPENDED",
    "TAINTED",
    "Agent",
    "AgentConfig",
    "AgentResult",
    "AgentTool",
    "AgentkitError",
    "Approval",
    "Budget",
    "BudgetExceeded",
    "BuiltRequest",
    "ChainedGuard",
    "Checkpoint",
    "CheckpointPort",
    "Checkpointer",
    "Compactor",
    "CompositeToolSource",
    "ConfigError",
    "CorruptMemoryEntry",
    "CorruptSessionItem",
    "DecodingError",
    "Deferred",
    "Detector",
    "DynamicToolSource",
    "ElicitationError",
    "Elicitor",
    "EncodingError",
    "EntryRows",
    "Estimator",
    "Evaluator",
    "Fold",
    "FoldError",
    "FoldObserver",
    "Folding",
    "FunctionTool",
    "Grant",
    "GrantReport",
    "Grantor",
    "Grounder",
    "GroundingAdmit",
    "GroundingRender",
    "GroundingSource",
    "Guard",
    "GuardBlocked",
    "GuardChain",
    "GuardDecision",
    "GuardInput",
    "Guardrail",
    "GuardrailViolation",
    "HookError",
    "HookTimeoutError",
    "Hooks",
    "InstructionPart",
    "Instructions",
    "Invoker",
    "KeyValueStore",
    "Kit",
    "KitOptions",
    "LiveInstructions",
    "LivePartSource",
    "MaxTurnsExceeded",
    "Memory",
    "MemoryBlock",
    "MemoryConflict",
    "MemoryEntry",
    "MemoryItem",
    "MemoryListing",
    "MemoryManifest",
    "MemoryOptions",
    "MemoryStore",
    "Message",
    "Middleware",
    "Model",
    "ModelDeadlineExceeded",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "NewItem",
    "NullRecorder",
    "Omission",
    "OutputCoerce",
    "OutputSchema",
    "OutputStream",
    "OutputValidationError",
    "ParseError",
    "PartSource",
    "PartialCache",
    "PartialJSONParser",
    "PartialParsing",
    "PartsFor",
    "PendingToolCallError",
    "PluginConfig",
    "PluginConflictError",
    "PluginError",
    "PluginInfo",
    "PluginLoadError",
    "PluginManager",
    "PluginOrderError",
    "PolicyEngine",
    "PostgresPool",
    "Prompt",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderResponseError",
    "RecordedInstructions",
    "Recorder",
    "Redacted",
    "Registration",
    "ReloadablePartSource",
    "Rendered",
    "Repair",
    "RequestBuilder",
    "RunContext",
    "RunError",
    "RunState",
    "SchemaAdapter",
    "Scratchpad",
    "SecretTaintError",
    "SessionConflict",
    "SessionHeader",
    "SessionInfo",
    "SessionItem",
    "SessionNotFound",
    "SessionState",
    "SessionStore",
    "Sessions",
    "SlowHookWarning",
    "Span",
    "SpanExporter",
    "SqliteFile",
    "StopDecision",
    "StorageError",
    "StoreBridge",
    "StoredCheckpoint",
    "StreamEvent",
    "Summarizer",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolConflict",
    "ToolConflictError",
    "ToolDecision",
    "ToolDefinitionError",
    "ToolInvocation",
    "ToolOrigin",
    "ToolResult",
    "ToolSource",
    "ToolSourceBridge",
    "ToolSourceError",
    "ToolSpec",
    "ToolTimeoutError",
    "ToolUnion",
    "Trace",
    "TraceFile",
    "TurnInfo",
    "Unit",
    "UnknownNameError",
    "UnsupportedTypeError",
    "Usage",
    "UsageError",
    "Verdict",
    "VerdictObserver",
    "VersionConflict",
    "WorkingContext",
    "__version__",
    "adapt",
    "agent_tool",
    "as_middleware",
    "bare_instance",
    "build_guard_chain",
    "compaction",
    "compaction_units",
    "compose_instructions",
    "current_span",
    "decode_json",
    "decode_state",
    "default_middlewares",
    "egress",
    "encode_state",
    "error_line",
    "estimate_message",
    "estimate_tokens",
    "fold_cut",
    "get_compactor",
    "get_guard",
    "get_guardrail",
    "get_instruction_part",
    "get_plugin_manager",
    "get_tool_source",
    "grant_scope",
    "hookimpl",
    "iban_valid",
    "import_optional",
    "jsonable",
    "keep_units",
    "kit_compaction",
    "kit_guardrail",
    "kit_guards",
    "kit_hooks",
    "kit_memory",
    "kit_middlewares",
    "load_policy",
    "luhn_valid",
    "mask_url",
    "metering",
    "open_checkpoint_store",
    "open_memory_store",
    "open_session_store",
    "order_sources",
    "output_coerce",
    "parse_sqlite_url",
    "partial_json",
    "pending_calls",
    "read_kit_options",
    "read_trace_file",
    "recent_units",
    "redact_pii",
    "render_grounding",
    "render_transcript",
    "repair_transcript",
    "report_verdict",
    "reset_plugin_manager",
    "resolve_checkpointer",
    "resolve_model",
    "resolve_policy",
    "retry",
    "span_exporters",
    "stored_entry",
    "stream_partials",
    "strict_json_schema",
    "strip_code_fence",
    "strip_reasoning",
    "structure",
    "supports_structured_output",
    "tool",
    "tracing",
    "units_from_end",
    "within_budget",
    "write_summary",
]

# Public classes and functions show their public path (``agentkit_core.Agent``) in reprs,
# tracebacks and docs, not the private module they live in (httpx does the same).
_publish(__all__, globals(), __name__)
del _publish
