"""The plugin's hooks: its registration, and its part in the contested tool-call fields.

When the plugin is installed, every tool call is checked (a blocked URL in the arguments is a
``deny``) and every tool result is framed as untrusted data (and redacted, when enabled), using
a WebGuardrail configured from the environment:

* ``AGENTKIT_WEB_EGRESS_ALLOW``: comma-separated domains; once set, only those are reachable.
* ``AGENTKIT_WEB_REDACT_TOOL_OUTPUT``: ``1``/``true``/``yes``/``on`` to redact tool output.
* ``AGENTKIT_WEB_RESOLVE``: ``1``/``true``/``yes``/``on`` to also resolve names
  (``resolving_url_check``) before a call runs.
"""

from __future__ import annotations

import json
import os
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import GuardrailViolation
from agentkit_core import RunContext
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core import ToolResult
from agentkit_core import hookimpl

from ._guardrail import WebGuardrail
from ._guardrail import resolving_url_check

ENV_ALLOW = "AGENTKIT_WEB_EGRESS_ALLOW"
ENV_REDACT = "AGENTKIT_WEB_REDACT_TOOL_OUTPUT"
ENV_RESOLVE = "AGENTKIT_WEB_RESOLVE"

_cache: dict[tuple[str | None, ...], WebGuardrail] = {}


def _flag(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise ConfigError(
        f"environment variable {name}={os.environ[name]!r} is not a boolean; use 1 or 0",
        value=os.environ[name],
        source=name,
    )


def hook_guardrail() -> WebGuardrail:
    """The WebGuardrail the hooks use, built from the environment (rebuilt when it changes)."""
    key = tuple(os.environ.get(n) for n in (ENV_ALLOW, ENV_REDACT, ENV_RESOLVE))
    guardrail = _cache.get(key)
    if guardrail is None:
        allow_raw = os.environ.get(ENV_ALLOW)
        allow = None
        if allow_raw is not None:
            allow = [d.strip() for d in allow_raw.split(",") if d.strip()]
        guardrail = WebGuardrail(
            egress_allow=allow,
            url_check=resolving_url_check if _flag(ENV_RESOLVE) else None,
            redact_tool_output=_flag(ENV_REDACT),
        )
        _cache.clear()
        _cache[key] = guardrail
    return guardrail


@hookimpl
def agentkit_register_guardrails(register: Any) -> None:
    register("web", WebGuardrail)


@hookimpl
async def agentkit_before_tool_call(ctx: RunContext, call: ToolCall) -> ToolDecision | None:
    """Deny a call whose arguments hold a URL the guardrail refuses; no opinion otherwise."""
    try:
        arguments = call.parsed_arguments()
    except json.JSONDecodeError:
        return None  # the loop reports bad arguments itself
    try:
        await hook_guardrail().check_arguments(arguments)
    except GuardrailViolation as exc:
        return ToolDecision.deny(f"web guardrail: {exc}")
    return None


@hookimpl
def agentkit_after_tool_call(ctx: RunContext, call: ToolCall, result: ToolResult) -> ToolResult:
    """The result framed as untrusted data (redacted first when enabled)."""
    return hook_guardrail().process_tool_result(result)
