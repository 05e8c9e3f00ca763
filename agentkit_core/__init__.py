"""agentkit: a small agent loop whose every capability is a pluggy plugin.

The public API is what this module exports; everything in ``agentkit_core._*`` is private.
Plugin authors need only ``import agentkit_core`` (and ``agentkit_core.testing`` in tests).

Importing this module imports none of the modules behind it (PEP 562): each public name is
imported from its private module the first time it is used, so ``import agentkit_core`` (and
``agentkit plugins list``) does not pay for asyncio, the agent loop or the kit until an agent
runs. ``_EXPORTS`` is the one list of the public names; ``__all__`` is built from it, and
tests/test_public_surface.py holds the ``TYPE_CHECKING`` imports (what mypy and editors read)
to it.
"""

from __future__ import annotations

import sys

#: ``typing.TYPE_CHECKING`` without importing typing (the type checkers read the name).
TYPE_CHECKING = False

__version__ = "0.1.0"

#: Every public name, under the private module that defines it, in that module's order.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_agent": ("Agent",),
    "_agent_tool": ("AgentTool", "agent_tool"),
    "_approvals": ("Approval",),
    "_executor": (
        "Executor",
        "InProcessExecutor",
        "StepKind",
        "get_executor",
        "replayed_step",
        "resolve_executor",
        "timed_step",
    ),
    "_checkpoint": (
        "DONE",
        "FAILED",
        "RUNNING",
        "SUSPENDED",
        "TAINTED",
        "Checkpoint",
        "Checkpointer",
        "CheckpointPort",
        "KeyValueStore",
        "StoreBridge",
        "StoredCheckpoint",
        "resolve_checkpointer",
    ),
    "_compaction": ("Compactor", "compaction"),
    "_config": ("PluginConfig", "read_kit_options"),
    "_context": ("Elicitor", "Invoker", "RunContext", "RunServices"),
    "_discovery": ("PluginInfo",),
    "_encoder": ("decode_state", "encode_state"),
    "_errors": (
        "AgentkitError",
        "ApprovalRefused",
        "BudgetExceeded",
        "ConfigError",
        "CorruptMemoryEntry",
        "CorruptSessionItem",
        "DecodingError",
        "ElicitationError",
        "EncodingError",
        "FoldError",
        "GuardrailViolation",
        "HookError",
        "HookTimeoutError",
        "MaxTurnsExceeded",
        "MemoryConflict",
        "ModelDeadlineExceeded",
        "OutputValidationError",
        "ParseError",
        "PendingToolCallError",
        "PluginConflictError",
        "PluginError",
        "PluginLoadError",
        "PluginOrderError",
        "ProviderError",
        "ProviderHTTPError",
        "ProviderResponseError",
        "RunError",
        "SecretTaintError",
        "SessionConflict",
        "SessionNotFound",
        "SlowHookWarning",
        "StorageError",
        "ToolDefinitionError",
        "ToolSourceError",
        "ToolTimeoutError",
        "StepTimeoutError",
        "UnknownNameError",
        "UnsupportedTypeError",
        "UsageError",
        "VersionConflict",
        "GuardBlocked",
    ),
    "_evaluator": ("Evaluator",),
    "_fold": (
        "SUMMARY",
        "SUMMARY_HEADER",
        "SUMMARY_INSTRUCTIONS",
        "Fold",
        "Folding",
        "FoldObserver",
        "Summarizer",
        "fold_cut",
        "render_transcript",
        "write_summary",
    ),
    "_framing": ("fold_lookalikes", "escape_untrusted", "frame_untrusted"),
    "_guardrails": ("Guardrail", "egress"),
    "_guards": (
        "GUARD_NAMESPACE",
        "ChainedGuard",
        "Guard",
        "GuardChain",
        "GuardDecision",
        "GuardInput",
    ),
    "_hooks": ("Hooks", "StopDecision", "ToolDecision", "TurnInfo"),
    "_instructions": (
        "DEFAULT_ORDER",
        "SEPARATOR",
        "InstructionPart",
        "Instructions",
        "LiveInstructions",
        "LivePartSource",
        "Omission",
        "PartSource",
        "ReloadablePartSource",
        "Rendered",
        "TextPart",
        "compose_instructions",
        "order_sources",
    ),
    "_invoke": ("default_middlewares", "metering", "retry", "tracing"),
    "_lazy": ("lazy_attributes",),
    "_kit": ("AgentConfig", "Kit"),
    "_kit_options": (
        "KitOptions",
        "kit_compaction",
        "kit_guardrail",
        "kit_hooks",
        "kit_memory",
        "kit_middlewares",
        "kit_guards",
    ),
    "_lookup": (
        "adapt",
        "get_compactor",
        "get_guardrail",
        "get_instruction_part",
        "get_tool_source",
        "load_policy",
        "open_checkpoint_store",
        "open_memory_store",
        "open_session_store",
        "resolve_model",
        "resolve_policy",
        "span_exporters",
        "get_guard",
        "build_guard_chain",
        "open_checkpointer",
        "open_sessions",
        "open_memory",
        "open_memory_block",
    ),
    "_memory": (
        "ENTRY_COLUMNS",
        "EntryRows",
        "Memory",
        "MemoryEntry",
        "MemoryListing",
        "MemoryStore",
        "stored_entry",
    ),
    "_memory_block": ("MemoryBlock", "MemoryManifest", "MemoryOptions"),
    "_messages": ("Message", "ToolCall", "Usage"),
    "_middleware": ("Middleware", "ToolInvocation", "as_middleware"),
    "_models": (
        "Model",
        "ModelRequest",
        "ModelResponse",
        "ModelSettings",
        "OutputSchema",
        "StreamEvent",
        "ToolSpec",
    ),
    "_output": (
        "OutputCoerce",
        "OutputStream",
        "PartialCache",
        "PartialParsing",
        "SchemaAdapter",
        "bare_instance",
        "decode_json",
        "error_line",
        "import_optional",
        "output_coerce",
        "stream_partials",
        "strict_json_schema",
        "strip_code_fence",
        "structure",
        "supports_structured_output",
    ),
    "_partial": ("PartialJSONParser", "partial_json"),
    "_plugins": ("PluginManager", "Registration", "get_plugin_manager", "reset_plugin_manager"),
    "_policy": (
        "Deferred",
        "Grant",
        "Grantor",
        "GrantReport",
        "PolicyEngine",
        "grant_scope",
    ),
    "_recorder": ("NullRecorder", "PartsFor", "Recorder"),
    "_redaction": (
        "PII_DETECTORS",
        "Detector",
        "Redacted",
        "iban_valid",
        "luhn_valid",
        "redact_pii",
    ),
    "_requests": (
        "BuiltRequest",
        "Grounder",
        "GroundingAdmit",
        "GroundingRender",
        "GroundingSource",
        "MemoryItem",
        "Prompt",
        "RequestBuilder",
        "WorkingContext",
        "render_grounding",
    ),
    "_run_state": ("AgentResult", "RunState"),
    "_session_state": ("REASONING", "RecordedInstructions", "SessionState", "strip_reasoning"),
    "_scope": ("DEFAULT_MODEL_DEADLINE", "Budget", "Scratchpad"),
    "_sessions": (
        "ITEM_KINDS",
        "SESSION_SCHEMA",
        "NewItem",
        "SessionHeader",
        "SessionInfo",
        "SessionItem",
        "Sessions",
        "SessionStore",
    ),
    # the store helpers' public home is agentkit_core.stores; kept here until __all__ is cut
    "stores._postgres": ("POSTGRES_OPTIONS", "PostgresPool"),
    "stores._sqlite": ("SQLITE_DEFAULTS", "SqliteFile", "parse_sqlite_url"),
    "_tokens": ("Estimator", "estimate_message", "estimate_tokens"),
    "_tools": ("FunctionTool", "Tool", "ToolResult", "tool"),
    "_toolsource": ("ToolSource",),
    "_toolunion": (
        "CompositeToolSource",
        "DynamicToolSource",
        "ToolConflict",
        "ToolConflictError",
        "ToolOrigin",
        "ToolSourceBridge",
        "ToolUnion",
    ),
    "_tracing": ("Span", "SpanExporter", "Trace", "current_span", "jsonable"),
    "_units": (
        "Repair",
        "Unit",
        "compaction_units",
        "keep_units",
        "pending_calls",
        "recent_units",
        "repair_transcript",
        "units_from_end",
        "within_budget",
    ),
    "_urls": ("mask_url",),
    "_verdicts": ("Verdict", "VerdictObserver", "report_verdict"),
    # agentkit_core.cli's, still exported here too; agentkit_core.cli is their home
    "cli._run": ("add_agent_arguments", "file_kit_options", "kit_options_from_args"),
    "cli._trace_file": ("TraceFile", "read_trace_file"),
    "hookspecs": ("hookimpl",),
}

_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted([*_MODULE_OF, "__version__"])

if TYPE_CHECKING:  # the same names, imported for the type checker and editors
    from typing import Any

    from ._agent import Agent as Agent
    from ._agent_tool import AgentTool as AgentTool
    from ._agent_tool import agent_tool as agent_tool
    from ._approvals import Approval as Approval
    from ._checkpoint import DONE as DONE
    from ._checkpoint import FAILED as FAILED
    from ._checkpoint import RUNNING as RUNNING
    from ._checkpoint import SUSPENDED as SUSPENDED
    from ._checkpoint import TAINTED as TAINTED
    from ._checkpoint import Checkpoint as Checkpoint
    from ._checkpoint import Checkpointer as Checkpointer
    from ._checkpoint import CheckpointPort as CheckpointPort
    from ._checkpoint import KeyValueStore as KeyValueStore
    from ._checkpoint import StoreBridge as StoreBridge
    from ._checkpoint import StoredCheckpoint as StoredCheckpoint
    from ._checkpoint import resolve_checkpointer as resolve_checkpointer
    from ._compaction import Compactor as Compactor
    from ._compaction import compaction as compaction
    from ._config import PluginConfig as PluginConfig
    from ._config import read_kit_options as read_kit_options
    from ._context import Elicitor as Elicitor
    from ._context import Invoker as Invoker
    from ._context import RunContext as RunContext
    from ._context import RunServices as RunServices
    from ._discovery import PluginInfo as PluginInfo
    from ._encoder import decode_state as decode_state
    from ._encoder import encode_state as encode_state
    from ._errors import AgentkitError as AgentkitError
    from ._errors import ApprovalRefused as ApprovalRefused
    from ._errors import BudgetExceeded as BudgetExceeded
    from ._errors import ConfigError as ConfigError
    from ._errors import CorruptMemoryEntry as CorruptMemoryEntry
    from ._errors import CorruptSessionItem as CorruptSessionItem
    from ._errors import DecodingError as DecodingError
    from ._errors import ElicitationError as ElicitationError
    from ._errors import EncodingError as EncodingError
    from ._errors import FoldError as FoldError
    from ._errors import GuardBlocked as GuardBlocked
    from ._errors import GuardrailViolation as GuardrailViolation
    from ._errors import HookError as HookError
    from ._errors import HookTimeoutError as HookTimeoutError
    from ._errors import MaxTurnsExceeded as MaxTurnsExceeded
    from ._errors import MemoryConflict as MemoryConflict
    from ._errors import ModelDeadlineExceeded as ModelDeadlineExceeded
    from ._errors import OutputValidationError as OutputValidationError
    from ._errors import ParseError as ParseError
    from ._errors import PendingToolCallError as PendingToolCallError
    from ._errors import PluginConflictError as PluginConflictError
    from ._errors import PluginError as PluginError
    from ._errors import PluginLoadError as PluginLoadError
    from ._errors import PluginOrderError as PluginOrderError
    from ._errors import ProviderError as ProviderError
    from ._errors import ProviderHTTPError as ProviderHTTPError
    from ._errors import ProviderResponseError as ProviderResponseError
    from ._errors import RunError as RunError
    from ._errors import SecretTaintError as SecretTaintError
    from ._errors import SessionConflict as SessionConflict
    from ._errors import SessionNotFound as SessionNotFound
    from ._errors import SlowHookWarning as SlowHookWarning
    from ._errors import StepTimeoutError as StepTimeoutError
    from ._errors import StorageError as StorageError
    from ._errors import ToolDefinitionError as ToolDefinitionError
    from ._errors import ToolSourceError as ToolSourceError
    from ._errors import ToolTimeoutError as ToolTimeoutError
    from ._errors import UnknownNameError as UnknownNameError
    from ._errors import UnsupportedTypeError as UnsupportedTypeError
    from ._errors import UsageError as UsageError
    from ._errors import VersionConflict as VersionConflict
    from ._evaluator import Evaluator as Evaluator
    from ._executor import Executor as Executor
    from ._executor import InProcessExecutor as InProcessExecutor
    from ._executor import StepKind as StepKind
    from ._executor import get_executor as get_executor
    from ._executor import replayed_step as replayed_step
    from ._executor import resolve_executor as resolve_executor
    from ._executor import timed_step as timed_step
    from ._fold import SUMMARY as SUMMARY
    from ._fold import SUMMARY_HEADER as SUMMARY_HEADER
    from ._fold import SUMMARY_INSTRUCTIONS as SUMMARY_INSTRUCTIONS
    from ._fold import Fold as Fold
    from ._fold import Folding as Folding
    from ._fold import FoldObserver as FoldObserver
    from ._fold import Summarizer as Summarizer
    from ._fold import fold_cut as fold_cut
    from ._fold import render_transcript as render_transcript
    from ._fold import write_summary as write_summary
    from ._framing import escape_untrusted as escape_untrusted
    from ._framing import fold_lookalikes as fold_lookalikes
    from ._framing import frame_untrusted as frame_untrusted
    from ._guardrails import Guardrail as Guardrail
    from ._guardrails import egress as egress
    from ._guards import GUARD_NAMESPACE as GUARD_NAMESPACE
    from ._guards import ChainedGuard as ChainedGuard
    from ._guards import Guard as Guard
    from ._guards import GuardChain as GuardChain
    from ._guards import GuardDecision as GuardDecision
    from ._guards import GuardInput as GuardInput
    from ._hooks import Hooks as Hooks
    from ._hooks import StopDecision as StopDecision
    from ._hooks import ToolDecision as ToolDecision
    from ._hooks import TurnInfo as TurnInfo
    from ._instructions import DEFAULT_ORDER as DEFAULT_ORDER
    from ._instructions import SEPARATOR as SEPARATOR
    from ._instructions import InstructionPart as InstructionPart
    from ._instructions import Instructions as Instructions
    from ._instructions import LiveInstructions as LiveInstructions
    from ._instructions import LivePartSource as LivePartSource
    from ._instructions import Omission as Omission
    from ._instructions import PartSource as PartSource
    from ._instructions import ReloadablePartSource as ReloadablePartSource
    from ._instructions import Rendered as Rendered
    from ._instructions import TextPart as TextPart
    from ._instructions import compose_instructions as compose_instructions
    from ._instructions import order_sources as order_sources
    from ._invoke import default_middlewares as default_middlewares
    from ._invoke import metering as metering
    from ._invoke import retry as retry
    from ._invoke import tracing as tracing
    from ._kit import AgentConfig as AgentConfig
    from ._kit import Kit as Kit
    from ._kit_options import KitOptions as KitOptions
    from ._kit_options import kit_compaction as kit_compaction
    from ._kit_options import kit_guardrail as kit_guardrail
    from ._kit_options import kit_guards as kit_guards
    from ._kit_options import kit_hooks as kit_hooks
    from ._kit_options import kit_memory as kit_memory
    from ._kit_options import kit_middlewares as kit_middlewares
    from ._lazy import lazy_attributes as lazy_attributes
    from ._lookup import adapt as adapt
    from ._lookup import build_guard_chain as build_guard_chain
    from ._lookup import get_compactor as get_compactor
    from ._lookup import get_guard as get_guard
    from ._lookup import get_guardrail as get_guardrail
    from ._lookup import get_instruction_part as get_instruction_part
    from ._lookup import get_tool_source as get_tool_source
    from ._lookup import load_policy as load_policy
    from ._lookup import open_checkpoint_store as open_checkpoint_store
    from ._lookup import open_checkpointer as open_checkpointer
    from ._lookup import open_memory as open_memory
    from ._lookup import open_memory_block as open_memory_block
    from ._lookup import open_memory_store as open_memory_store
    from ._lookup import open_session_store as open_session_store
    from ._lookup import open_sessions as open_sessions
    from ._lookup import resolve_model as resolve_model
    from ._lookup import resolve_policy as resolve_policy
    from ._lookup import span_exporters as span_exporters
    from ._memory import ENTRY_COLUMNS as ENTRY_COLUMNS
    from ._memory import EntryRows as EntryRows
    from ._memory import Memory as Memory
    from ._memory import MemoryEntry as MemoryEntry
    from ._memory import MemoryListing as MemoryListing
    from ._memory import MemoryStore as MemoryStore
    from ._memory import stored_entry as stored_entry
    from ._memory_block import MemoryBlock as MemoryBlock
    from ._memory_block import MemoryManifest as MemoryManifest
    from ._memory_block import MemoryOptions as MemoryOptions
    from ._messages import Message as Message
    from ._messages import ToolCall as ToolCall
    from ._messages import Usage as Usage
    from ._middleware import Middleware as Middleware
    from ._middleware import ToolInvocation as ToolInvocation
    from ._middleware import as_middleware as as_middleware
    from ._models import Model as Model
    from ._models import ModelRequest as ModelRequest
    from ._models import ModelResponse as ModelResponse
    from ._models import ModelSettings as ModelSettings
    from ._models import OutputSchema as OutputSchema
    from ._models import StreamEvent as StreamEvent
    from ._models import ToolSpec as ToolSpec
    from ._output import OutputCoerce as OutputCoerce
    from ._output import OutputStream as OutputStream
    from ._output import PartialCache as PartialCache
    from ._output import PartialParsing as PartialParsing
    from ._output import SchemaAdapter as SchemaAdapter
    from ._output import bare_instance as bare_instance
    from ._output import decode_json as decode_json
    from ._output import error_line as error_line
    from ._output import import_optional as import_optional
    from ._output import output_coerce as output_coerce
    from ._output import stream_partials as stream_partials
    from ._output import strict_json_schema as strict_json_schema
    from ._output import strip_code_fence as strip_code_fence
    from ._output import structure as structure
    from ._output import supports_structured_output as supports_structured_output
    from ._partial import PartialJSONParser as PartialJSONParser
    from ._partial import partial_json as partial_json
    from ._plugins import PluginManager as PluginManager
    from ._plugins import Registration as Registration
    from ._plugins import get_plugin_manager as get_plugin_manager
    from ._plugins import reset_plugin_manager as reset_plugin_manager
    from ._policy import Deferred as Deferred
    from ._policy import Grant as Grant
    from ._policy import Grantor as Grantor
    from ._policy import GrantReport as GrantReport
    from ._policy import PolicyEngine as PolicyEngine
    from ._policy import grant_scope as grant_scope
    from ._recorder import NullRecorder as NullRecorder
    from ._recorder import PartsFor as PartsFor
    from ._recorder import Recorder as Recorder
    from ._redaction import PII_DETECTORS as PII_DETECTORS
    from ._redaction import Detector as Detector
    from ._redaction import Redacted as Redacted
    from ._redaction import iban_valid as iban_valid
    from ._redaction import luhn_valid as luhn_valid
    from ._redaction import redact_pii as redact_pii
    from ._requests import BuiltRequest as BuiltRequest
    from ._requests import Grounder as Grounder
    from ._requests import GroundingAdmit as GroundingAdmit
    from ._requests import GroundingRender as GroundingRender
    from ._requests import GroundingSource as GroundingSource
    from ._requests import MemoryItem as MemoryItem
    from ._requests import Prompt as Prompt
    from ._requests import RequestBuilder as RequestBuilder
    from ._requests import WorkingContext as WorkingContext
    from ._requests import render_grounding as render_grounding
    from ._run_state import AgentResult as AgentResult
    from ._run_state import RunState as RunState
    from ._scope import DEFAULT_MODEL_DEADLINE as DEFAULT_MODEL_DEADLINE
    from ._scope import Budget as Budget
    from ._scope import Scratchpad as Scratchpad
    from ._session_state import REASONING as REASONING
    from ._session_state import RecordedInstructions as RecordedInstructions
    from ._session_state import SessionState as SessionState
    from ._session_state import strip_reasoning as strip_reasoning
    from ._sessions import ITEM_KINDS as ITEM_KINDS
    from ._sessions import SESSION_SCHEMA as SESSION_SCHEMA
    from ._sessions import NewItem as NewItem
    from ._sessions import SessionHeader as SessionHeader
    from ._sessions import SessionInfo as SessionInfo
    from ._sessions import SessionItem as SessionItem
    from ._sessions import Sessions as Sessions
    from ._sessions import SessionStore as SessionStore
    from ._tokens import Estimator as Estimator
    from ._tokens import estimate_message as estimate_message
    from ._tokens import estimate_tokens as estimate_tokens
    from ._tools import FunctionTool as FunctionTool
    from ._tools import Tool as Tool
    from ._tools import ToolResult as ToolResult
    from ._tools import tool as tool
    from ._toolsource import ToolSource as ToolSource
    from ._toolunion import CompositeToolSource as CompositeToolSource
    from ._toolunion import DynamicToolSource as DynamicToolSource
    from ._toolunion import ToolConflict as ToolConflict
    from ._toolunion import ToolConflictError as ToolConflictError
    from ._toolunion import ToolOrigin as ToolOrigin
    from ._toolunion import ToolSourceBridge as ToolSourceBridge
    from ._toolunion import ToolUnion as ToolUnion
    from ._tracing import Span as Span
    from ._tracing import SpanExporter as SpanExporter
    from ._tracing import Trace as Trace
    from ._tracing import current_span as current_span
    from ._tracing import jsonable as jsonable
    from ._units import Repair as Repair
    from ._units import Unit as Unit
    from ._units import compaction_units as compaction_units
    from ._units import keep_units as keep_units
    from ._units import pending_calls as pending_calls
    from ._units import recent_units as recent_units
    from ._units import repair_transcript as repair_transcript
    from ._units import units_from_end as units_from_end
    from ._units import within_budget as within_budget
    from ._urls import mask_url as mask_url
    from ._verdicts import Verdict as Verdict
    from ._verdicts import VerdictObserver as VerdictObserver
    from ._verdicts import report_verdict as report_verdict
    from .cli._run import add_agent_arguments as add_agent_arguments
    from .cli._run import file_kit_options as file_kit_options
    from .cli._run import kit_options_from_args as kit_options_from_args
    from .cli._trace_file import TraceFile as TraceFile
    from .cli._trace_file import read_trace_file as read_trace_file
    from .hookspecs import hookimpl as hookimpl
    from .stores._postgres import POSTGRES_OPTIONS as POSTGRES_OPTIONS
    from .stores._postgres import PostgresPool as PostgresPool
    from .stores._sqlite import SQLITE_DEFAULTS as SQLITE_DEFAULTS
    from .stores._sqlite import SqliteFile as SqliteFile
    from .stores._sqlite import parse_sqlite_url as parse_sqlite_url

#: The modules of ``_EXPORTS`` whose names are published (see ``_publish_loaded``).
_published: set[str] = set()

if not TYPE_CHECKING:  # for type checkers the names are the imports above, and no others:
    # a module __getattr__ they could see would let a misspelt name through unreported

    def __getattr__(name: str) -> Any:
        """Import a public name's module on first use (PEP 562), and publish what it loaded."""
        module = _MODULE_OF.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f"{__name__}.{module}"), name)
        _publish_loaded()
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})


def _publish_loaded() -> None:
    """Publish the names of every private module loaded so far, and keep them here.

    Public classes and functions show their public path (``agentkit_core.Agent``) in reprs,
    tracebacks and docs, not the private module they live in (httpx does the same). A module
    is published once, when a name first resolved here finds it loaded (importing one module
    loads those it imports), and its names are then kept in this module's namespace, so the
    next use of them is a plain attribute read.
    """
    from ._public import publish

    where = {name: f"{__name__}.{module}" for name, module in _MODULE_OF.items()}
    progress = True
    while progress:  # publishing may import a module an annotation names: publish it too
        progress = False
        for module, names in _EXPORTS.items():
            loaded = sys.modules.get(f"{__name__}.{module}")
            if module in _published or loaded is None or _initializing(loaded):
                continue
            objects = {name: getattr(loaded, name) for name in names}
            publish(names, objects, __name__, where)
            globals().update(objects)
            _published.add(module)
            progress = True


def _initializing(module: Any) -> bool:
    """Whether ``module`` is still executing (a circular import): its names may not exist yet."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))
