"""OpenTelemetry's GenAI names for a span's attributes (:meth:`Span.genai_attributes`).

The semantic conventions name some of what core sets (the agent, the model, token counts, the
tool and the call); every other attribute is ``agentkit.<key>``. tracing-otel passes the
mapping on as it is, so the names live here, in core, beside the spans they name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType

from ._encoder import jsonable
from ._span_export import AS_IS
from ._span_export import ATTRIBUTE_LIMIT

USAGE_NAMES: dict[str, tuple[str, ...]] = {
    "input_tokens": ("gen_ai.usage.input_tokens",),
    "output_tokens": ("gen_ai.usage.output_tokens",),
    "cache_read_tokens": ("gen_ai.usage.cache_read.input_tokens",),
    "cache_write_tokens": ("gen_ai.usage.cache_creation.input_tokens",),
    "reasoning_tokens": ("gen_ai.usage.reasoning.output_tokens",),
}
_TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "tool": ("gen_ai.tool.name",),
    "call_id": ("gen_ai.tool.call.id",),
}

#: Per span name, the attributes OpenTelemetry's GenAI semantic conventions name, and their
#: names there (see :meth:`Span.genai_attributes`); every other attribute is ``agentkit.<key>``.
#: ``finish_reason`` becomes the list ``gen_ai.response.finish_reasons``.
GENAI_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "run": {"agent": ("gen_ai.agent.name",), **USAGE_NAMES},
    "model_call": {
        "model": ("gen_ai.request.model", "gen_ai.response.model"),
        "finish_reason": ("gen_ai.response.finish_reasons",),
        **USAGE_NAMES,
    },
    # one model of a fallback chain tried (agentkit_core.FallbackModel): its model and tokens
    "model_attempt": {"model": ("gen_ai.request.model",), **USAGE_NAMES},
    "tool_call": _TOOL_NAMES,
    "verdict": _TOOL_NAMES,
    "guardrail": _TOOL_NAMES,
}

#: Per span name, the GenAI attributes that say what it does, first among its GenAI attributes.
GENAI_OPERATIONS: dict[str, dict[str, object]] = {
    "run": {"gen_ai.operation.name": "invoke_agent"},
    "model_call": {"gen_ai.operation.name": "chat"},
    "model_attempt": {"gen_ai.operation.name": "chat"},
    "tool_call": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function"},
}

#: Attributes that quote what a person wrote: in :meth:`Span.genai_attributes` on request only.
CONTENT_ATTRIBUTES = frozenset({"question"})

#: Marks an attribute recorded as a list of one (``finish_reason``), before its GenAI name.
_LIST = "\0list"
_SCALARS = frozenset({str, bool, int, float})
_TEXTS = frozenset({str})
#: The most span names, and attribute keys per span name, whose GenAI names are remembered:
#: names made up at run time (a key per item, say) are worked out each time, not kept unbounded.
_KEPT = 512
#: Per span name, each attribute key seen: its GenAI name(s) (see :func:`_genai_name`).
_GENAI_SEEN: dict[str, dict[str, str | tuple[str, ...]]] = {}


def _genai_name(name: str, key: str) -> str | tuple[str, ...]:
    """``agentkit.<key>``, else its GenAI name(s), else (_LIST, its name), else () (content)."""
    if key in CONTENT_ATTRIBUTES:
        return ()
    targets = GENAI_NAMES.get(name, {}).get(key)
    if targets is None:
        return "agentkit." + key
    return (_LIST, targets[0]) if key == "finish_reason" else targets


def _otel_value(value: object) -> object:
    """``value`` as OpenTelemetry takes it: a scalar, a list of texts or of ints, else JSON."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, list | tuple) and (
        {*map(type, value)} <= _TEXTS  # ids and names, the common lists: one call, no loop
        or all(isinstance(v, str) for v in value)
        or all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return value  # as it is: OpenTelemetry keeps a copy of its own
    return json.dumps(jsonable(value), ensure_ascii=False)


def _genai_mapping(name: str, exported: Mapping[str, object], content: bool) -> dict[str, object]:
    """:meth:`Span.genai_attributes` worked out from ``exported``, key by key."""
    # the span's own attributes, read-only, only when each is None, a number, a flag, a text
    # or a list or tuple of texts (see export_attributes): what OpenTelemetry takes as is
    plain = type(exported) is MappingProxyType
    names = _GENAI_SEEN.get(name)
    if names is None:
        names = {}
        if len(_GENAI_SEEN) < _KEPT:
            _GENAI_SEEN[name] = names
    operation = GENAI_OPERATIONS.get(name)
    out: dict[str, object] = {**operation} if operation else {}
    for key, value in exported.items():
        target = names.get(key)
        if target is None:
            target = _genai_name(name, key)
            if len(names) < _KEPT:
                names[key] = target
        if type(target) is str:  # agentkit.<key>: the common case, first
            if value is not None:
                out[target] = value if plain or type(value) in _SCALARS else _otel_value(value)
        elif value is None:
            continue
        elif not target:  # content
            if content:
                out["agentkit." + key] = _otel_value(value)
        elif target[0] == _LIST:  # finish_reason: a list of one
            out[target[1]] = [str(value)]
        else:  # its GenAI name(s)
            value = value if type(value) in _SCALARS else str(value)
            for genai_name in target:
                out[genai_name] = value
    return out


#: What core sets on a run's span (the agent starts it, ``stamp_run`` ends it): for each, its
#: GenAI name (see :data:`GENAI_NAMES`) -- what :func:`run_genai` maps without a lookup per key.
_RUN_GENAI = {
    key: target if type(target) is str else target[0]
    for key in (
        "agent",
        "model",
        "session_id",
        "task_item",
        "status",
        "stop_reason",
        "requests",
        "cost",
        "pending",
        *USAGE_NAMES,
    )
    for target in (_genai_name("run", key),)
}
#: Those the conventions name (``agent``, the token counts).
_RUN_NAMED = frozenset(GENAI_NAMES["run"])


def run_genai(attributes: Mapping[str, object]) -> dict[str, object] | None:
    """A run's :meth:`Span.genai_attributes` from what core set on its span, as it ends.

    None when the export rule would change a value (a text past the cap, a value of another
    type) or the attributes hold one core does not set (a plugin's): the span then maps its
    exported attributes when asked. Made once a run, where it is stamped.
    """
    out: dict[str, object] = {"gen_ai.operation.name": "invoke_agent"}
    try:
        for key, value in attributes.items():
            if value is None:
                continue
            kind = type(value)
            if kind is str:
                if len(value) > ATTRIBUTE_LIMIT:  # type: ignore[arg-type]  # a str
                    return None
            elif kind not in AS_IS and (  # else a list of texts within the cap (ids)
                (kind is not list and kind is not tuple)
                or key in _RUN_NAMED  # a GenAI name takes a list as its text
                or len("".join(value)) > ATTRIBUTE_LIMIT  # type: ignore[arg-type]
            ):
                return None
            out[_RUN_GENAI[key]] = value
    except (KeyError, TypeError):  # a key core does not set; a list not of texts
        return None
    return out
