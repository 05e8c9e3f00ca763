"""A pydantic model of a function's parameters, with descriptions from its docstring.

Kept apart from ``_tools`` so pydantic is imported only when a function tool is first built.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from ._errors import ToolDefinitionError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ._messages import JSONObject


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
) -> tuple[str, type[BaseModel] | None, str | None, JSONObject]:
    """``(description, model or None, name of the RunContext parameter or None, schema)``.

    A signature pydantic cannot make a model or a JSON schema of (a ``Callable`` parameter, a
    forward reference it cannot resolve, a default that is no JSON value such as NaN) is a
    :class:`ToolDefinitionError` naming the function, here rather than at the first request.
    """
    where = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    summary, model, ctx_param = _model(fn, where)
    try:
        schema = _schema_of(model)
        json.dumps(schema, allow_nan=False)  # what every provider sends: plain JSON
    except Exception as exc:
        raise ToolDefinitionError(
            f"cannot make the JSON schema of tool function {where}: {exc}; give each parameter "
            "a JSON type and a JSON default"
        ) from exc
    return summary, model, ctx_param, schema


def _model(fn: Callable[..., object], where: str) -> tuple[str, type[BaseModel] | None, str | None]:
    import pydantic
    from pydantic.fields import FieldInfo

    from ._scope import RunScope

    summary, descriptions = parse_docstring(fn.__doc__, where)
    # a callable object's hints are its __call__'s
    typed = fn if inspect.isroutine(fn) or isinstance(fn, type) else type(fn).__call__
    try:
        # include_extras keeps Annotated[..., Field(examples=..., ge=...)]: without it the
        # schema loses every keyword the annotation declares
        hints = typing.get_type_hints(typed, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(
            f"cannot read the type hints of tool function {where}: {exc}"
        ) from exc
    fields: dict[str, Any] = {}
    ctx_param = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool function {where} takes *{param.name}; a tool's arguments must "
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
    try:
        model = pydantic.create_model(
            f"{where.rpartition('.')[2]}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid"),
            **fields,
        )
    except Exception as exc:
        raise ToolDefinitionError(
            f"cannot make a model of tool function {where}'s parameters: {exc}"
        ) from exc
    return summary, model, ctx_param


def _schema_of(model: type[BaseModel] | None) -> JSONObject:
    """The model's JSON Schema as pydantic emits it (``examples``, bounds, formats...).

    Only the titles pydantic makes up are dropped: the model's (``add_arguments``) and each
    property's own name title-cased, which tell the model nothing; a ``title=`` given stays.
    """
    if model is None or not model.model_fields:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    schema: dict[str, Any] = model.model_json_schema()
    schema.pop("title", None)
    for name, prop in schema.get("properties", {}).items():
        if prop.get("title") == name.title().replace("_", " "):
            del prop["title"]
    schema["additionalProperties"] = False
    return schema
