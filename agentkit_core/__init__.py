"""agentkit: a small agent loop whose every capability is a pluggy plugin.

This module is the door for people who build agents: ``Agent``, ``Kit``, tools, messages, the
run's context and results, the option records and the errors a run raises. Plugin authors
find the seams' contracts in the second door, :mod:`agentkit_core.plugin`; everything in
``agentkit_core._*`` is private.

Importing this module imports none of the modules behind it (PEP 562): each public name is
imported from its private module the first time it is used (``agentkit_core._public`` does it
for both doors), so ``import agentkit_core`` (and ``agentkit plugins list``) does not pay for
asyncio, the agent loop or the kit until an agent runs. ``_EXPORTS`` is the one list of the
public names; ``__all__`` is built from it, and tests/test_public_surface.py holds the
``TYPE_CHECKING`` imports (what mypy and editors read) to it.
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing typing (the type checkers read the name).
TYPE_CHECKING = False

__version__ = "0.1.0"

#: Every public name, under the module that defines it, in that module's order.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "hookspecs": ("hookimpl",),
    "_agent": ("Agent",),
    "_agent_tool": ("AgentTool", "agent_tool"),
    "_approvals": ("Approval",),
    "_checkpoint": ("Checkpointer",),
    "_compaction": ("compaction",),
    "_config": ("PluginConfig",),
    "_context": ("RunContext",),
    "_errors": (
        "AgentkitError",
        "UsageError",
        "ConfigError",
        "ApprovalRefused",
        "ToolDefinitionError",
        "UnknownNameError",
        "PluginError",
        "PluginLoadError",
        "HookError",
        "HookTimeoutError",
        "SlowHookWarning",
        "StorageError",
        "SessionConflict",
        "SessionNotFound",
        "GuardrailViolation",
        "GuardBlocked",
        "ToolSourceError",
        "ProviderError",
        "ModelDeadlineExceeded",
    ),
    "_evaluator": ("Evaluator",),
    "_fallback": ("FallbackModel",),
    "_fold": ("Folding",),
    "_guard_chain": ("GuardChain",),
    "_hooks": ("ToolDecision", "StopDecision", "TurnInfo", "Hooks"),
    "_instructions": ("TextPart", "Instructions", "LiveInstructions"),
    "_kit": ("AgentConfig", "Kit"),
    "_kit_options": ("KitOptions",),
    "_lookup": ("open_checkpointer", "open_sessions", "open_memory", "open_memory_block"),
    "_memory": ("MemoryEntry", "Memory"),
    "_memory_block": ("MemoryOptions", "MemoryBlock"),
    "_memory_ground": ("MemoryGrounder",),
    "_message_filter": ("APP_ONLY", "drop_app_only"),
    "_messages": ("ToolCall", "Message", "Usage"),
    "_models": ("ModelSettings",),
    "_plugins": ("PluginManager", "get_plugin_manager"),
    "_recorder": ("Recorder",),
    "_requests": ("Prompt",),
    "_run_errors": (
        "RunError",
        "MaxTurnsExceeded",
        "BudgetExceeded",
        "OutputValidationError",
        "ToolTimeoutError",
        "StepTimeoutError",
        "PendingToolCallError",
        "ElicitationError",
    ),
    "_run_state": ("AgentResult", "RunState"),
    "_scope": ("Budget",),
    "_sessions": ("Sessions",),
    "_tools": ("ToolResult", "Tool", "FunctionTool", "tool"),
    "_toolunion": ("ToolUnion",),
    "_tracing": ("Trace",),
}

_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

#: Names this door exported in 0.1 that other public packages hold now, besides every name of
#: ``agentkit_core.plugin``. Until 0.3 they still resolve here, with a DeprecationWarning.
_LEFT_FOR: dict[str, tuple[str, ...]] = {
    "agentkit_core.stores": (
        "POSTGRES_OPTIONS",
        "PostgresPool",
        "SQLITE_DEFAULTS",
        "SqliteFile",
        "parse_sqlite_url",
    ),
    "agentkit_core.cli": (
        "TraceFile",
        "add_agent_arguments",
        "file_kit_options",
        "kit_options_from_args",
        "read_trace_file",
    ),
}

__all__ = sorted([*_MODULE_OF, "__version__"])

if TYPE_CHECKING:  # the same names, imported for the type checker and editors
    from typing import Any

    from ._agent import Agent as Agent
    from ._agent_tool import AgentTool as AgentTool
    from ._agent_tool import agent_tool as agent_tool
    from ._approvals import Approval as Approval
    from ._checkpoint import Checkpointer as Checkpointer
    from ._compaction import compaction as compaction
    from ._config import PluginConfig as PluginConfig
    from ._context import RunContext as RunContext
    from ._errors import AgentkitError as AgentkitError
    from ._errors import ApprovalRefused as ApprovalRefused
    from ._errors import ConfigError as ConfigError
    from ._errors import GuardBlocked as GuardBlocked
    from ._errors import GuardrailViolation as GuardrailViolation
    from ._errors import HookError as HookError
    from ._errors import HookTimeoutError as HookTimeoutError
    from ._errors import ModelDeadlineExceeded as ModelDeadlineExceeded
    from ._errors import PluginError as PluginError
    from ._errors import PluginLoadError as PluginLoadError
    from ._errors import ProviderError as ProviderError
    from ._errors import SessionConflict as SessionConflict
    from ._errors import SessionNotFound as SessionNotFound
    from ._errors import SlowHookWarning as SlowHookWarning
    from ._errors import StorageError as StorageError
    from ._errors import ToolDefinitionError as ToolDefinitionError
    from ._errors import ToolSourceError as ToolSourceError
    from ._errors import UnknownNameError as UnknownNameError
    from ._errors import UsageError as UsageError
    from ._evaluator import Evaluator as Evaluator
    from ._fallback import FallbackModel as FallbackModel
    from ._fold import Folding as Folding
    from ._guard_chain import GuardChain as GuardChain
    from ._hooks import Hooks as Hooks
    from ._hooks import StopDecision as StopDecision
    from ._hooks import ToolDecision as ToolDecision
    from ._hooks import TurnInfo as TurnInfo
    from ._instructions import Instructions as Instructions
    from ._instructions import LiveInstructions as LiveInstructions
    from ._instructions import TextPart as TextPart
    from ._kit import AgentConfig as AgentConfig
    from ._kit import Kit as Kit
    from ._kit_options import KitOptions as KitOptions
    from ._lookup import open_checkpointer as open_checkpointer
    from ._lookup import open_memory as open_memory
    from ._lookup import open_memory_block as open_memory_block
    from ._lookup import open_sessions as open_sessions
    from ._memory import Memory as Memory
    from ._memory import MemoryEntry as MemoryEntry
    from ._memory_block import MemoryBlock as MemoryBlock
    from ._memory_block import MemoryOptions as MemoryOptions
    from ._memory_ground import MemoryGrounder as MemoryGrounder
    from ._message_filter import APP_ONLY as APP_ONLY
    from ._message_filter import drop_app_only as drop_app_only
    from ._messages import Message as Message
    from ._messages import ToolCall as ToolCall
    from ._messages import Usage as Usage
    from ._models import ModelSettings as ModelSettings
    from ._plugins import PluginManager as PluginManager
    from ._plugins import get_plugin_manager as get_plugin_manager
    from ._recorder import Recorder as Recorder
    from ._requests import Prompt as Prompt
    from ._run_errors import BudgetExceeded as BudgetExceeded
    from ._run_errors import ElicitationError as ElicitationError
    from ._run_errors import MaxTurnsExceeded as MaxTurnsExceeded
    from ._run_errors import OutputValidationError as OutputValidationError
    from ._run_errors import PendingToolCallError as PendingToolCallError
    from ._run_errors import RunError as RunError
    from ._run_errors import StepTimeoutError as StepTimeoutError
    from ._run_errors import ToolTimeoutError as ToolTimeoutError
    from ._run_state import AgentResult as AgentResult
    from ._run_state import RunState as RunState
    from ._scope import Budget as Budget
    from ._sessions import Sessions as Sessions
    from ._tools import FunctionTool as FunctionTool
    from ._tools import Tool as Tool
    from ._tools import ToolResult as ToolResult
    from ._tools import tool as tool
    from ._toolunion import ToolUnion as ToolUnion
    from ._tracing import Trace as Trace
    from .hookspecs import hookimpl as hookimpl

if not TYPE_CHECKING:  # for type checkers the names are the imports above, and no others:
    # a module __getattr__ they could see would let a misspelt name through unreported

    def __getattr__(name: str) -> Any:
        """Import a public name's module on first use (PEP 562), and publish what it loaded."""
        from ._public import resolve

        return resolve(__name__, name)

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
