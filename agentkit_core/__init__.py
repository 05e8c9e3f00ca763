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
from ._compaction import SUMMARY
from ._compaction import Compactor
from ._compaction import Unit
from ._compaction import compaction
from ._compaction import compaction_units
from ._compaction import keep_units
from ._compaction import recent_units
from ._compaction import units_from_end
from ._compaction import within_budget
from ._config import PluginConfig
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
from ._errors import DecodingError
from ._errors import ElicitationError
from ._errors import EncodingError
from ._errors import GuardrailViolation
from ._errors import MaxTurnsExceeded
from ._errors import ModelDeadlineExceeded
from ._errors import OutputValidationError
from ._errors import ParseError
from ._errors import PluginConflictError
from ._errors import PluginError
from ._errors import PluginLoadError
from ._errors import PluginOrderError
from ._errors import ProviderError
from ._errors import ProviderHTTPError
from ._errors import ProviderResponseError
from ._errors import RunError
from ._errors import StorageError
from ._errors import ToolDefinitionError
from ._errors import ToolSourceError
from ._errors import ToolTimeoutError
from ._errors import UnknownNameError
from ._errors import UnsupportedTypeError
from ._errors import UsageError
from ._errors import VersionConflict
from ._evaluator import Evaluator
from ._guardrails import Guardrail
from ._guardrails import egress
from ._hooks import Hooks
from ._hooks import StopDecision
from ._hooks import ToolDecision
from ._hooks import TurnInfo
from ._instructions import DEFAULT_ORDER
from ._instructions import SEPARATOR
from ._instructions import InstructionPart
from ._instructions import Instructions
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
from ._kit import kit_hooks
from ._kit import kit_middlewares
from ._kit import read_kit_options
from ._lookup import adapt
from ._lookup import get_compactor
from ._lookup import get_guardrail
from ._lookup import get_instruction_part
from ._lookup import get_tool_source
from ._lookup import open_checkpoint_store
from ._lookup import resolve_model
from ._messages import Message
from ._messages import ToolCall
from ._messages import Usage
from ._messages import message_from_openai
from ._messages import message_to_openai
from ._messages import messages_from_openai
from ._messages import messages_to_openai
from ._messages import usage_from_openai
from ._middleware import Middleware
from ._middleware import ToolInvocation
from ._middleware import as_middleware
from ._models import Model
from ._models import ModelRequest
from ._models import ModelResponse
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
from ._toolunion import ToolUnion
from ._tracing import Span
from ._tracing import Trace
from ._tracing import current_span
from ._urls import mask_url
from .hookspecs import hookimpl
from .tokens import Estimator

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MODEL_DEADLINE",
    "DEFAULT_ORDER",
    "DONE",
    "FAILED",
    "RUNNING",
    "SEPARATOR",
    "SUMMARY",
    "SUSPENDED",
    "TAINTED",
    "Agent",
    "AgentConfig",
    "AgentResult",
    "AgentTool",
    "AgentkitError",
    "Budget",
    "BudgetExceeded",
    "BuiltRequest",
    "Checkpoint",
    "CheckpointPort",
    "Checkpointer",
    "Compactor",
    "CompositeToolSource",
    "ConfigError",
    "DecodingError",
    "DynamicToolSource",
    "ElicitationError",
    "Elicitor",
    "EncodingError",
    "Estimator",
    "Evaluator",
    "FunctionTool",
    "Grounder",
    "GroundingAdmit",
    "GroundingRender",
    "GroundingSource",
    "Guardrail",
    "GuardrailViolation",
    "Hooks",
    "InstructionPart",
    "Instructions",
    "Invoker",
    "KeyValueStore",
    "Kit",
    "MaxTurnsExceeded",
    "MemoryItem",
    "Message",
    "Middleware",
    "Model",
    "ModelDeadlineExceeded",
    "ModelRequest",
    "ModelResponse",
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
    "PluginConfig",
    "PluginConflictError",
    "PluginError",
    "PluginInfo",
    "PluginLoadError",
    "PluginManager",
    "PluginOrderError",
    "Prompt",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderResponseError",
    "Registration",
    "ReloadablePartSource",
    "Rendered",
    "RequestBuilder",
    "RunContext",
    "RunError",
    "RunState",
    "SchemaAdapter",
    "Scratchpad",
    "Span",
    "StopDecision",
    "StorageError",
    "StoreBridge",
    "StoredCheckpoint",
    "StreamEvent",
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
    "ToolSourceError",
    "ToolSpec",
    "ToolTimeoutError",
    "ToolUnion",
    "Trace",
    "TurnInfo",
    "Unit",
    "UnknownNameError",
    "UnsupportedTypeError",
    "Usage",
    "UsageError",
    "VersionConflict",
    "WorkingContext",
    "__version__",
    "adapt",
    "agent_tool",
    "as_middleware",
    "bare_instance",
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
    "get_compactor",
    "get_guardrail",
    "get_instruction_part",
    "get_plugin_manager",
    "get_tool_source",
    "hookimpl",
    "import_optional",
    "keep_units",
    "kit_hooks",
    "kit_middlewares",
    "mask_url",
    "message_from_openai",
    "message_to_openai",
    "messages_from_openai",
    "messages_to_openai",
    "metering",
    "open_checkpoint_store",
    "order_sources",
    "output_coerce",
    "partial_json",
    "read_kit_options",
    "recent_units",
    "render_grounding",
    "reset_plugin_manager",
    "resolve_checkpointer",
    "resolve_model",
    "retry",
    "stream_partials",
    "strict_json_schema",
    "strip_code_fence",
    "structure",
    "supports_structured_output",
    "tool",
    "tracing",
    "units_from_end",
    "usage_from_openai",
    "within_budget",
]
