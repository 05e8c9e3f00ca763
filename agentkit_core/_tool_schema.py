"""A pydantic model of a function's parameters, with descriptions from its docstring.

Kept apart from ``_tools`` so pydantic is imported only when a function tool is first built.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Any

from ._errors import ToolDefinitionError

_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\(.*?\))?\s*:\s*(.+)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary paragraph and the per-parameter descriptions of a Google-style docstring."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    summary, _, rest = text.partition("\n\n")
    params: dict[str, str] = {}
    section = False
    for line in rest.splitlines():
        if line.strip() in ("Args:", "Arguments:", "Parameters:"):
            section = True
            continue
        if section and line and not line.startswith(" "):
            section = False
        if section:
            match = _ARG_LINE.match(line)
            if match:
                params[match.group(1)] = match.group(2).strip()
    return " ".join(summary.split()), params


def signature_model(fn: Callable[..., Any]) -> tuple[str, Any, str | None]:
    """``(description, model or None, name of the RunContext parameter or None)``."""
    import pydantic

    from ._context import RunContext

    summary, descriptions = parse_docstring(fn.__doc__)
    try:
        hints = typing.get_type_hints(fn)
    except Exception as exc:
        raise ToolDefinitionError(
            f"cannot read the type hints of tool function {fn.__qualname__}: {exc}"
        ) from exc
    fields: dict[str, Any] = {}
    ctx_param = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool function {fn.__qualname__} takes *{param.name}; a tool's arguments must "
                "be named parameters"
            )
        annotation = hints.get(param.name, Any)
        if annotation is RunContext:
            ctx_param = param.name
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (
            annotation,
            pydantic.Field(default, description=descriptions.get(param.name)),
        )
    if not fields:
        return summary, None, ctx_param
    model = pydantic.create_model(
        f"{fn.__name__}_arguments", __config__=pydantic.ConfigDict(extra="forbid"), **fields
    )
    return summary, model, ctx_param
