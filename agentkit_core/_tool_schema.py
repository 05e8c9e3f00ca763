"""A pydantic model of a function's parameters, with descriptions from its docstring.

Kept apart from ``_tools`` so pydantic is imported only when a function tool is first built.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from ._errors import ToolDefinitionError

if TYPE_CHECKING:
    from pydantic import BaseModel


def parse_docstring(doc: str | None, where: str = "") -> tuple[str, dict[str, str]]:
    """The summary paragraph and the per-parameter descriptions of a docstring.

    Google (``Args:``), Sphinx (``:param x:``) and NumPy (``Parameters`` and dashes) styles
    are read; docstring_parser picks the one the text is written in. ``where`` names the
    docstring's function in an error.
    """
    if not doc:
        return "", {}
    import docstring_parser  # on first use: 20 ms that ``import agentkit_core`` need not pay

    try:
        parsed = docstring_parser.parse(inspect.cleandoc(doc))
    except docstring_parser.ParseError as exc:
        raise ToolDefinitionError(
            f"cannot read the docstring of tool function {where or '?'}: {exc}; write its "
            "parameters in Google (Args:), Sphinx (:param x:) or NumPy (Parameters) style"
        ) from exc
    summary = (parsed.description or "").partition("\n\n")[0]
    params = {
        p.arg_name: " ".join(p.description.split())
        for p in parsed.params
        if p.description and p.description.strip()
    }
    return " ".join(summary.split()), params


def signature_model(
    fn: Callable[..., object],
) -> tuple[str, type[BaseModel] | None, str | None]:
    """``(description, model or None, name of the RunContext parameter or None)``."""
    import pydantic
    from pydantic.fields import FieldInfo

    from ._scope import RunScope

    summary, descriptions = parse_docstring(fn.__doc__, fn.__qualname__)
    try:
        # include_extras keeps Annotated[..., Field(examples=..., ge=...)]: without it the
        # schema loses every keyword the annotation declares
        hints = typing.get_type_hints(fn, include_extras=True)
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
        # RunContext, or RunContext[Deps] (an alias whose origin is the class)
        kind = typing.get_origin(annotation) or annotation
        if isinstance(kind, type) and issubclass(kind, RunScope):
            ctx_param = param.name
            continue
        default = ... if param.default is param.empty else param.default
        described = descriptions.get(param.name)
        if described is None or FieldInfo.from_annotated_attribute(annotation, default).description:
            field = pydantic.Field(default)  # a description in the annotation wins
        else:
            field = pydantic.Field(default, description=described)
        fields[param.name] = (annotation, field)
    if not fields:
        return summary, None, ctx_param
    model = pydantic.create_model(
        f"{fn.__name__}_arguments", __config__=pydantic.ConfigDict(extra="forbid"), **fields
    )
    return summary, model, ctx_param
