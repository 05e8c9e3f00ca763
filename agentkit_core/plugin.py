"""The door for people who write plugins: the seams' contracts and what implementing one needs.

``agentkit_core`` is the door for agent builders; this one holds the rest of the public API a
plugin uses: the hookspec types (``Register`` and each seam's factory type), every seam
Protocol (``Model``, ``Compactor``, ``CheckpointPort``, ``SessionStore``, ``MemoryStore``,
``Guard``, ``Guardrail``, ``PolicyEngine``, ``ToolSource``, ``SpanExporter``, ``Executor``...),
the request and response types a model exchanges, the errors a seam raises, the lookup layer
and the helpers plugins share. ``agentkit_core.testing`` has the conformance suites.

Like the root door, importing this module imports none of the modules behind it: each name is
imported on first use, by the same code (``agentkit_core._public``).
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing typing (the type checkers read the name).
TYPE_CHECKING = False

#: Every public name, under the module that defines it, in that module's order.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "hookspecs": (
        "HookResult",
        "HookFunction",
        "ToolVerdict",
        "Register",
        "RegisterSchemaAdapter",
        "MCPTokenStore",
        "CompactorFactory",
        "GuardrailFactory",
        "GuardFactory",
        "ExecutorFactory",
        "InstructionPartFactory",
        "PolicyLoader",
        "ModelFactory",
        "SpanExporterFactory",
        "StoreOpener",
        "SessionStoreOpener",
        "MemoryStoreOpener",
        "MCPTokenStoreOpener",
        "ServerFactory",
        "ToolSourceFactory",
    ),
    "_checkpoint": (
        "RUNNING",
        "SUSPENDED",
        "DONE",
        "FAILED",
        "TAINTED",
        "StoredCheckpoint",
        "CheckpointPort",
        "Checkpoint",
        "KeyValueStore",
        "StoreBridge",
        "resolve_checkpointer",
    ),
    "_compaction": ("Compactor",),
    "_config": ("read_kit_options",),
    "_context": ("Elicitor", "Invoker", "RunServices"),
    "_discovery": ("PluginInfo",),
    "_encoder": ("encode_state", "decode_state", "jsonable"),
    "_fallback": ("FallbackExhausted",),
    "_errors": (
        "UnsupportedTypeError",
        "PluginConflictError",
        "PluginOrderError",
        "VersionConflict",
        "EncodingError",
        "CorruptSessionItem",
        "SecretTaintError",
        "CorruptMemoryEntry",
        "DecodingError",
        "ParseError",
        "ProviderHTTPError",
        "ProviderResponseError",
    ),
    "_executor": (
        "StepKind",
        "Executor",
        "timed_step",
        "replayed_step",
        "InProcessExecutor",
        "get_executor",
        "resolve_executor",
    ),
    "_fold": (
        "SUMMARY",
        "Summarizer",
        "SUMMARY_INSTRUCTIONS",
        "SUMMARY_HEADER",
        "Fold",
        "FoldObserver",
        "render_transcript",
        "fold_cut",
        "write_summary",
    ),
    "_framing": ("fold_lookalikes", "escape_untrusted", "frame_untrusted"),
    "_guardrails": ("Guardrail", "egress"),
    "_guard": ("GUARD_NAMESPACE", "GuardDecision", "GuardInput", "Guard", "ChainedGuard"),
    "_instructions": (
        "DEFAULT_ORDER",
        "SEPARATOR",
        "InstructionPart",
        "Omission",
        "Rendered",
        "PartSource",
        "ReloadablePartSource",
        "order_sources",
        "compose_instructions",
        "LivePartSource",
    ),
    "_invoke": ("tracing", "metering", "default_middlewares"),
    "_pricing": ("Price", "Priced", "PriceSource", "cost_of"),
    "_retry": ("retry",),
    "_kit_options": (
        "kit_memory",
        "kit_hooks",
        "kit_middlewares",
        "kit_compaction",
        "kit_guards",
        "kit_guardrail",
    ),
    "_lazy": ("lazy_attributes",),
    "_lookup": (
        "get_compactor",
        "get_guardrail",
        "get_guard",
        "build_guard_chain",
        "get_instruction_part",
        "load_policy",
        "resolve_policy",
        "get_tool_source",
        "open_checkpoint_store",
        "open_session_store",
        "open_memory_store",
        "open_mcp_token_store",
        "resolve_model",
        "resolve_model_option",
        "adapt",
        "span_exporters",
    ),
    "_memory": (
        "MemoryConflict",
        "MemoryListing",
        "MemoryStore",
        "MemoryHit",
        "ENTRY_COLUMNS",
        "stored_entry",
        "EntryRows",
        "query_terms",
    ),
    "_memory_block": ("MemoryManifest",),
    "_messages": ("token_count",),
    "_middleware": ("ToolInvocation", "Middleware", "as_middleware"),
    "_models": (
        "ToolSpec",
        "OutputSchema",
        "ModelRequest",
        "ModelResponse",
        "StreamEvent",
        "Model",
        "hide_secret",
    ),
    "_output": (
        "SchemaAdapter",
        "PartialCache",
        "OutputStream",
        "PartialParsing",
        "stream_partials",
        "strip_code_fence",
        "decode_json",
        "error_line",
        "import_optional",
        "structure",
        "bare_instance",
        "strict_json_schema",
        "supports_structured_output",
        "OutputCoerce",
        "output_coerce",
    ),
    "_partial": ("PartialJSONParser", "partial_json"),
    "_plugins": ("Registration", "reset_plugin_manager"),
    "_policy": ("grant_scope", "Deferred", "Grant", "GrantReport", "Grantor", "PolicyEngine"),
    "_recorder": ("PartsFor", "NullRecorder"),
    "_redaction": (
        "Detector",
        "Redacted",
        "luhn_valid",
        "iban_valid",
        "PII_DETECTORS",
        "redact_pii",
    ),
    "_requests": (
        "MemoryItem",
        "Grounder",
        "GroundingSource",
        "GroundingAdmit",
        "GroundingRender",
        "render_grounding",
        "WorkingContext",
        "BuiltRequest",
        "RequestBuilder",
    ),
    "_run_errors": ("FoldError",),
    "_scope": ("Scratchpad", "DEFAULT_MODEL_DEADLINE"),
    "_session_state": ("REASONING", "strip_reasoning", "RecordedInstructions", "SessionState"),
    "_sessions": (
        "SESSION_SCHEMA",
        "ITEM_KINDS",
        "SessionItem",
        "SessionInfo",
        "SessionHeader",
        "NewItem",
        "SessionStore",
    ),
    "_tokens": ("Estimator", "estimate_message", "estimate_tokens"),
    "_toolsource": ("ToolSource",),
    "_toolunion": (
        "DynamicToolSource",
        "CompositeToolSource",
        "ToolSourceBridge",
        "ToolOrigin",
        "ToolConflict",
        "ToolConflictError",
    ),
    "_tracing": ("Span", "SpanExporter", "current_span"),
    "_units": (
        "Unit",
        "units_from_end",
        "compaction_units",
        "keep_units",
        "recent_units",
        "newest_user",
        "within_budget",
        "Repair",
        "repair_transcript",
        "pending_calls",
    ),
    "_urls": ("mask_url",),
    "_verdicts": ("Verdict", "VerdictObserver", "report_verdict"),
    "stores._private": ("create_private",),
}

_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)

if TYPE_CHECKING:  # the same names, imported for the type checker and editors
    from typing import Any

    from ._checkpoint import DONE as DONE
    from ._checkpoint import FAILED as FAILED
    from ._checkpoint import RUNNING as RUNNING
    from ._checkpoint import SUSPENDED as SUSPENDED
    from ._checkpoint import TAINTED as TAINTED
    from ._checkpoint import Checkpoint as Checkpoint
    from ._checkpoint import CheckpointPort as CheckpointPort
    from ._checkpoint import KeyValueStore as KeyValueStore
    from ._checkpoint import StoreBridge as StoreBridge
    from ._checkpoint import StoredCheckpoint as StoredCheckpoint
    from ._checkpoint import resolve_checkpointer as resolve_checkpointer
    from ._compaction import Compactor as Compactor
    from ._config import read_kit_options as read_kit_options
    from ._context import Elicitor as Elicitor
    from ._context import Invoker as Invoker
    from ._context import RunServices as RunServices
    from ._discovery import PluginInfo as PluginInfo
    from ._encoder import decode_state as decode_state
    from ._encoder import encode_state as encode_state
    from ._encoder import jsonable as jsonable
    from ._errors import CorruptMemoryEntry as CorruptMemoryEntry
    from ._errors import CorruptSessionItem as CorruptSessionItem
    from ._errors import DecodingError as DecodingError
    from ._errors import EncodingError as EncodingError
    from ._errors import ParseError as ParseError
    from ._errors import PluginConflictError as PluginConflictError
    from ._errors import PluginOrderError as PluginOrderError
    from ._errors import ProviderHTTPError as ProviderHTTPError
    from ._errors import ProviderResponseError as ProviderResponseError
    from ._errors import SecretTaintError as SecretTaintError
    from ._errors import UnsupportedTypeError as UnsupportedTypeError
    from ._errors import VersionConflict as VersionConflict
    from ._executor import Executor as Executor
    from ._executor import InProcessExecutor as InProcessExecutor
    from ._executor import StepKind as StepKind
    from ._executor import get_executor as get_executor
    from ._executor import replayed_step as replayed_step
    from ._executor import resolve_executor as resolve_executor
    from ._executor import timed_step as timed_step
    from ._fallback import FallbackExhausted as FallbackExhausted
    from ._fold import SUMMARY as SUMMARY
    from ._fold import SUMMARY_HEADER as SUMMARY_HEADER
    from ._fold import SUMMARY_INSTRUCTIONS as SUMMARY_INSTRUCTIONS
    from ._fold import Fold as Fold
    from ._fold import FoldObserver as FoldObserver
    from ._fold import Summarizer as Summarizer
    from ._fold import fold_cut as fold_cut
    from ._fold import render_transcript as render_transcript
    from ._fold import write_summary as write_summary
    from ._framing import escape_untrusted as escape_untrusted
    from ._framing import fold_lookalikes as fold_lookalikes
    from ._framing import frame_untrusted as frame_untrusted
    from ._guard import GUARD_NAMESPACE as GUARD_NAMESPACE
    from ._guard import ChainedGuard as ChainedGuard
    from ._guard import Guard as Guard
    from ._guard import GuardDecision as GuardDecision
    from ._guard import GuardInput as GuardInput
    from ._guardrails import Guardrail as Guardrail
    from ._guardrails import egress as egress
    from ._instructions import DEFAULT_ORDER as DEFAULT_ORDER
    from ._instructions import SEPARATOR as SEPARATOR
    from ._instructions import InstructionPart as InstructionPart
    from ._instructions import LivePartSource as LivePartSource
    from ._instructions import Omission as Omission
    from ._instructions import PartSource as PartSource
    from ._instructions import ReloadablePartSource as ReloadablePartSource
    from ._instructions import Rendered as Rendered
    from ._instructions import compose_instructions as compose_instructions
    from ._instructions import order_sources as order_sources
    from ._invoke import default_middlewares as default_middlewares
    from ._invoke import metering as metering
    from ._invoke import tracing as tracing
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
    from ._lookup import open_mcp_token_store as open_mcp_token_store
    from ._lookup import open_memory_store as open_memory_store
    from ._lookup import open_session_store as open_session_store
    from ._lookup import resolve_model as resolve_model
    from ._lookup import resolve_model_option as resolve_model_option
    from ._lookup import resolve_policy as resolve_policy
    from ._lookup import span_exporters as span_exporters
    from ._memory import ENTRY_COLUMNS as ENTRY_COLUMNS
    from ._memory import EntryRows as EntryRows
    from ._memory import MemoryConflict as MemoryConflict
    from ._memory import MemoryHit as MemoryHit
    from ._memory import MemoryListing as MemoryListing
    from ._memory import MemoryStore as MemoryStore
    from ._memory import query_terms as query_terms
    from ._memory import stored_entry as stored_entry
    from ._memory_block import MemoryManifest as MemoryManifest
    from ._messages import token_count as token_count
    from ._middleware import Middleware as Middleware
    from ._middleware import ToolInvocation as ToolInvocation
    from ._middleware import as_middleware as as_middleware
    from ._models import Model as Model
    from ._models import ModelRequest as ModelRequest
    from ._models import ModelResponse as ModelResponse
    from ._models import OutputSchema as OutputSchema
    from ._models import StreamEvent as StreamEvent
    from ._models import ToolSpec as ToolSpec
    from ._models import hide_secret as hide_secret
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
    from ._plugins import Registration as Registration
    from ._plugins import reset_plugin_manager as reset_plugin_manager
    from ._policy import Deferred as Deferred
    from ._policy import Grant as Grant
    from ._policy import Grantor as Grantor
    from ._policy import GrantReport as GrantReport
    from ._policy import PolicyEngine as PolicyEngine
    from ._policy import grant_scope as grant_scope
    from ._pricing import Price as Price
    from ._pricing import Priced as Priced
    from ._pricing import PriceSource as PriceSource
    from ._pricing import cost_of as cost_of
    from ._recorder import NullRecorder as NullRecorder
    from ._recorder import PartsFor as PartsFor
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
    from ._requests import RequestBuilder as RequestBuilder
    from ._requests import WorkingContext as WorkingContext
    from ._requests import render_grounding as render_grounding
    from ._retry import retry as retry
    from ._run_errors import FoldError as FoldError
    from ._scope import DEFAULT_MODEL_DEADLINE as DEFAULT_MODEL_DEADLINE
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
    from ._sessions import SessionStore as SessionStore
    from ._tokens import Estimator as Estimator
    from ._tokens import estimate_message as estimate_message
    from ._tokens import estimate_tokens as estimate_tokens
    from ._toolsource import ToolSource as ToolSource
    from ._toolunion import CompositeToolSource as CompositeToolSource
    from ._toolunion import DynamicToolSource as DynamicToolSource
    from ._toolunion import ToolConflict as ToolConflict
    from ._toolunion import ToolConflictError as ToolConflictError
    from ._toolunion import ToolOrigin as ToolOrigin
    from ._toolunion import ToolSourceBridge as ToolSourceBridge
    from ._tracing import Span as Span
    from ._tracing import SpanExporter as SpanExporter
    from ._tracing import current_span as current_span
    from ._units import Repair as Repair
    from ._units import Unit as Unit
    from ._units import compaction_units as compaction_units
    from ._units import keep_units as keep_units
    from ._units import newest_user as newest_user
    from ._units import pending_calls as pending_calls
    from ._units import recent_units as recent_units
    from ._units import repair_transcript as repair_transcript
    from ._units import units_from_end as units_from_end
    from ._units import within_budget as within_budget
    from ._urls import mask_url as mask_url
    from ._verdicts import Verdict as Verdict
    from ._verdicts import VerdictObserver as VerdictObserver
    from ._verdicts import report_verdict as report_verdict
    from .hookspecs import CompactorFactory as CompactorFactory
    from .hookspecs import ExecutorFactory as ExecutorFactory
    from .hookspecs import GuardFactory as GuardFactory
    from .hookspecs import GuardrailFactory as GuardrailFactory
    from .hookspecs import HookFunction as HookFunction
    from .hookspecs import HookResult as HookResult
    from .hookspecs import InstructionPartFactory as InstructionPartFactory
    from .hookspecs import MCPTokenStore as MCPTokenStore
    from .hookspecs import MCPTokenStoreOpener as MCPTokenStoreOpener
    from .hookspecs import MemoryStoreOpener as MemoryStoreOpener
    from .hookspecs import ModelFactory as ModelFactory
    from .hookspecs import PolicyLoader as PolicyLoader
    from .hookspecs import Register as Register
    from .hookspecs import RegisterSchemaAdapter as RegisterSchemaAdapter
    from .hookspecs import ServerFactory as ServerFactory
    from .hookspecs import SessionStoreOpener as SessionStoreOpener
    from .hookspecs import SpanExporterFactory as SpanExporterFactory
    from .hookspecs import StoreOpener as StoreOpener
    from .hookspecs import ToolSourceFactory as ToolSourceFactory
    from .hookspecs import ToolVerdict as ToolVerdict
    from .stores._private import create_private as create_private

if not TYPE_CHECKING:  # see agentkit_core/__init__.py: type checkers read the imports above

    def __getattr__(name: str) -> Any:
        """Import a public name's module on first use (PEP 562), and publish what it loaded."""
        from ._public import resolve

        return resolve(__name__, name)

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
