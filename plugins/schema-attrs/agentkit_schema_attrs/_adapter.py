"""``AttrsAdapter``, loaded when the flavour is first used (see the package's docstring).

Subclassing the core's ``PartialParsing`` loads its typed-output machinery, which a run
without a typed output does not use, so the package imports this module only on demand.
"""

from __future__ import annotations

import typing
from typing import Any
from typing import Generic
from typing import TypeVar

from agentkit_core.plugin import ParseError
from agentkit_core.plugin import PartialCache
from agentkit_core.plugin import PartialParsing
from agentkit_core.plugin import UnsupportedTypeError
from agentkit_core.plugin import bare_instance
from agentkit_core.plugin import decode_json
from agentkit_core.plugin import error_line
from agentkit_core.plugin import import_optional
from agentkit_core.plugin import strict_json_schema
from agentkit_core.plugin import strip_code_fence
from agentkit_core.plugin import structure

from ._probe import probe

A = TypeVar("A")


_FIELDS: dict[type, dict[str, Any]] = {}
_ALIASES: dict[type, dict[str, str]] = {}
_MODELS: dict[type, Any] = {}


def _fields(tp: Any) -> dict[str, Any] | None:
    if not probe(tp):
        return None
    fields = _FIELDS.get(tp)
    if fields is None:
        import attrs

        attrs.resolve_types(tp)
        init = [a for a in attrs.fields(tp) if a.init]
        fields = _FIELDS[tp] = {a.name: a.type if a.type is not None else Any for a in init}
        _ALIASES[tp] = {a.name: a.alias or a.name for a in init}
    return fields


def _init(tp: Any, present: dict[str, Any]) -> Any:
    aliases = _ALIASES[tp]
    return tp(**{aliases[k]: v for k, v in present.items()})


def _model_for(tp: type, building: frozenset[type] = frozenset()) -> Any:
    """The pydantic model mirroring attrs class ``tp`` (cached)."""
    model = _MODELS.get(tp)
    if model is not None:
        return model
    if tp in building:
        raise UnsupportedTypeError(
            f"attrs class {tp.__qualname__} refers to itself; recursive attrs output types are "
            "not supported by the attrs flavour, use a pydantic model instead"
        )
    import attrs
    import pydantic

    fields = _fields(tp)
    assert fields is not None
    defaults = {a.name: a.default for a in attrs.fields(tp) if a.init}
    spec: dict[str, Any] = {}
    for name, ftp in fields.items():
        mirrored = _mirror(ftp, building | {tp})
        default = defaults[name]
        if default is attrs.NOTHING:
            spec[name] = (mirrored, ...)
        elif isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            factory = default.factory
            if default.takes_self:
                raise UnsupportedTypeError(
                    f"{tp.__qualname__}.{name} has a Factory(takes_self=True) default, which "
                    "the attrs flavour cannot express as a schema default"
                )
            spec[name] = (mirrored, pydantic.Field(default_factory=factory))
        else:
            spec[name] = (mirrored, default)
    model = pydantic.create_model(tp.__name__, __doc__=tp.__doc__, **spec)
    _MODELS[tp] = model
    return model


def _mirror(tp: Any, building: frozenset[type]) -> Any:
    if _fields(tp) is not None:
        return _model_for(tp, building)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is None or not args or origin is typing.Literal:
        return tp
    if origin is typing.Annotated:
        params = (_mirror(args[0], building), *args[1:])
        return typing.Annotated[params]
    mirrored = tuple(a if a is Ellipsis else _mirror(a, building) for a in args)
    if origin is typing.Union or type(tp).__name__ == "UnionType":
        return typing.Union[mirrored]  # noqa: UP007 - built from a tuple
    return origin[mirrored]


def error_lines(exc: Any) -> list[str]:
    """A pydantic ValidationError as ``"path: message"`` lines."""
    return [error_line(e["loc"], e["msg"]) for e in exc.errors()]


class AttrsAdapter(PartialParsing, Generic[A]):
    """An attrs class as a SchemaAdapter."""

    def __init__(self, tp: type[A]) -> None:
        self._attrs = import_optional("attrs", install="attrs", flavour="attrs")
        self._pydantic = import_optional("pydantic", install="pydantic", flavour="attrs")
        self._model = _model_for(tp)
        self.python_type = tp
        self.name = tp.__name__

    def json_schema(self, strict: bool = False) -> dict[str, Any]:
        """The JSON Schema of the type (``strict=True``: the OpenAI strict form)."""
        schema: dict[str, Any] = self._model.model_json_schema()
        return strict_json_schema(schema) if strict else schema

    def _from_model(self, model: Any) -> A:
        data = model.model_dump()
        return structure(self.python_type, data, fields_of=_fields, make=_init)  # type: ignore[no-any-return]

    def parse(self, text: str) -> A:
        """The answer as the declared type; invalid input raises ParseError."""
        try:
            model = self._model.model_validate_json(strip_code_fence(text))
        except self._pydantic.ValidationError as exc:
            errors = error_lines(exc)
            what = f"the answer does not match {self.name}"
            raise ParseError(f"{what}: {'; '.join(errors)}", raw=text, errors=errors) from exc
        decode_json(text)  # what pydantic accepted loosely: a repeated key, NaN, 1e400
        return self._from_model(model)

    def partial_from(self, data: Any, cache: PartialCache | None) -> Any:
        """The partial object for JSON ``data``, built without validation."""
        return structure(self.python_type, data, fields_of=_fields, make=bare_instance, cache=cache)

    def serialize(self, obj: Any) -> Any:
        """``obj`` as JSON-ready data."""
        return self._model.model_validate(self._attrs.asdict(obj)).model_dump(mode="json")

    def validate(self, value: Any) -> A:
        """A Python value (a tool's return) checked and returned as the declared type."""
        data = self._attrs.asdict(value) if isinstance(value, self.python_type) else value
        try:
            model = self._model.model_validate(data)
        except self._pydantic.ValidationError as exc:
            errors = error_lines(exc)
            what = f"{value!r:.200} is not a valid {self.name}"
            raise ParseError(
                f"{what}: {'; '.join(errors)}", raw=repr(value), errors=errors
            ) from exc
        return self._from_model(model)

    def __repr__(self) -> str:
        return f"<AttrsAdapter {self.name}>"
