"""The plugin's hooks: its registration, and its part in the contested tool-call fields.

The web guardrail is registered as ``"web"`` with its settings (:class:`WebSettings`) and the
environment prefix ``AGENTKIT_WEB_``, so core builds it from one configuration: the file's
``[guardrail.web]``, then ``AGENTKIT_WEB_*``, then options in code. The hooks apply the run's
guardrail (``ctx.guardrail``, which the agent also enforces through ``egress()``), and a
default ``WebGuardrail()`` to runs that have none:

* ``before_tool_call`` denies a call whose arguments hold a refused URL or host, when the run has
  no guardrail of its own (when it has one, the agent's ``egress()`` checks every call with it,
  so the arguments are scanned once);
* ``after_tool_call`` frames every tool result as untrusted data with the run's guardrail (or
  the default), redacting first when it is configured to.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import GuardrailViolation
from agentkit_core import hookimpl

if TYPE_CHECKING:
    from agentkit_core import RunContext
    from agentkit_core import ToolCall
    from agentkit_core import ToolDecision
    from agentkit_core import ToolResult
    from agentkit_core.plugin import GuardrailFactory
    from agentkit_core.plugin import Register

    from ._guardrail import WebGuardrail

#: The prefix of the web guardrail's environment variables (``AGENTKIT_WEB_EGRESS_ALLOW``...).
ENV_PREFIX = "AGENTKIT_WEB_"


@functools.cache
def default_guardrail() -> WebGuardrail:
    """What the hooks apply to a run without a guardrail: the secure defaults, no allow list.

    Built on the first hook call, so that loading the plugin imports no guardrail.
    """
    from ._guardrail import WebGuardrail

    return WebGuardrail()


def _web_guardrail(**options: Any) -> WebGuardrail:
    """``WebGuardrail(**options)``, the guardrail module imported on the first call."""
    from ._guardrail import WebGuardrail

    return WebGuardrail(**options)


def _web_settings() -> type:
    """:class:`WebSettings`, made when the settings are first read (not when the plugin loads)."""
    from ._settings import WebSettings

    return WebSettings


@hookimpl
def agentkit_register_guardrails(register: Register[GuardrailFactory]) -> None:
    register("web", _web_guardrail, settings=_web_settings, env_prefix=ENV_PREFIX)


@hookimpl
def agentkit_before_tool_call(
    ctx: RunContext, call: ToolCall
) -> ToolDecision | Awaitable[ToolDecision | None] | None:
    """Deny a call holding a URL the default guardrail refuses, in a run without a guardrail.

    No opinion otherwise: a run with a guardrail is checked by the agent's egress(). The
    defaults need no I/O, so the hook decides without a coroutine (a synchronous hook is
    folded without the async hooks' deadline); were they to resolve names, it would return
    one.
    """
    if ctx.guardrail is not None:
        return None  # the agent's egress() checks every call with the run's guardrail
    default = default_guardrail()
    try:
        if default.checks_need_io:
            return _check_resolving(call.parsed_arguments())
        default.check_call_offline(call)
    except json.JSONDecodeError:
        return None  # the loop reports bad arguments itself
    except GuardrailViolation as exc:
        return _denied(exc)
    return None


async def _check_resolving(arguments: Any) -> ToolDecision | None:
    try:
        await default_guardrail().check_arguments(arguments)
    except GuardrailViolation as exc:
        return _denied(exc)
    return None


def _denied(exc: GuardrailViolation) -> ToolDecision:
    from agentkit_core import ToolDecision

    return ToolDecision.deny(f"web guardrail: {exc}")


@hookimpl
def agentkit_after_tool_call(ctx: RunContext, call: ToolCall, result: ToolResult) -> ToolResult:
    """The result framed as untrusted data by the run's guardrail (redacted first if set to)."""
    guardrail = ctx.guardrail
    return (default_guardrail() if guardrail is None else guardrail).process_tool_result(result)
