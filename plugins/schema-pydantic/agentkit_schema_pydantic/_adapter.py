"""``PydanticAdapter``, loaded when the flavour is first used (see the package's docstring).

Subclassing the core's ``PartialParsing`` loads its typed-output machinery, which a run
without a typed output does not use, so the package imports this module only on demand.
"""

from __future__ import annotations

import sys
from typing import Any
from typing import Generic
from typing import TypeVar

from agentkit_core.plugin import ParseError
from agentkit_core.plugin import PartialCache
from agentkit_core.plugin import PartialParsing
from agentkit_core.plugin import decode_json
from agentkit_core.plugin import error_line
from agentkit_core.plugin import import_optional
from agentkit_core.plugin import strict_json_schema
from agentkit_core.plugin import strip_code_fence
from agentkit_core.plugin import structure

M = TypeVar("M")


def _fields(tp: Any) -> dict[str, Any] | None:
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not (isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)):
        return None
    model: Any = tp  # a BaseModel subclass; typed Any like the rest of pydantic's API here
    return {(f.alias or name): f.annotation for name, f in model.model_fields.items()}


def _construct(tp: Any, present: dict[str, Any]) -> Any:
    # model_construct skips validation; absent fields stay out of model_fields_set.
    return tp.model_construct(**present)


def error_lines(exc: Any) -> list[str]:
    """A pydantic ValidationError as ``"path: message"`` lines."""
    return [error_line(e["loc"], e["msg"]) for e in exc.errors()]


class PydanticAdapter(PartialParsing, Generic[M]):
    """A pydantic model class as a SchemaAdapter."""

    def __init__(self, tp: type[M]) -> None:
        self._pydantic = import_optional("pydantic", install="pydantic", flavour="pydantic")
        self.python_type = tp
        self.name = tp.__name__

    def json_schema(self, strict: bool = False) -> dict[str, Any]:
        """The JSON Schema of the type (``strict=True``: the OpenAI strict form)."""
        schema: dict[str, Any] = self.python_type.model_json_schema()  # type: ignore[attr-defined]
        return strict_json_schema(schema) if strict else schema

    def parse(self, text: str) -> M:
        """The answer as the declared type; invalid input raises ParseError."""
        try:
            parsed: M = self.python_type.model_validate_json(strip_code_fence(text))  # type: ignore[attr-defined]
        except self._pydantic.ValidationError as exc:
            errors = error_lines(exc)
            raise ParseError(
                f"the answer does not match {self.name}: {'; '.join(errors)}",
                raw=text,
                errors=errors,
            ) from exc
        decode_json(text)  # what pydantic accepted loosely: a repeated key, NaN, 1e400
        return parsed

    def partial_from(self, data: Any, cache: PartialCache | None) -> Any:
        """The partial object for JSON ``data``, built without validation."""
        return structure(self.python_type, data, fields_of=_fields, make=_construct, cache=cache)

    def serialize(self, obj: Any) -> Any:
        """``obj`` as JSON-ready data."""
        return obj.model_dump(mode="json")

    def validate(self, value: Any) -> M:
        """A Python value (a tool's return) checked and returned as the declared type."""
        try:
            return self.python_type.model_validate(value)  # type: ignore[attr-defined, no-any-return]
        except self._pydantic.ValidationError as exc:
            errors = error_lines(exc)
            raise ParseError(
                f"{value!r:.200} is not a valid {self.name}: {'; '.join(errors)}",
                raw=repr(value),
                errors=errors,
            ) from exc

    def __repr__(self) -> str:
        return f"<PydanticAdapter {self.name}>"
