"""``DataclassAdapter``, loaded when the flavour is first used (see the package's docstring).

Subclassing the core's ``PartialParsing`` loads its typed-output machinery, which a run
without a typed output does not use, so the package imports this module only on demand.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any
from typing import Generic
from typing import TypeVar

from agentkit_core.plugin import ParseError
from agentkit_core.plugin import PartialCache
from agentkit_core.plugin import PartialParsing
from agentkit_core.plugin import bare_instance
from agentkit_core.plugin import decode_json
from agentkit_core.plugin import error_line
from agentkit_core.plugin import import_optional
from agentkit_core.plugin import strict_json_schema
from agentkit_core.plugin import strip_code_fence
from agentkit_core.plugin import structure

from ._probe import probe

D = TypeVar("D")


_HINTS: dict[type, dict[str, Any]] = {}


def _fields(tp: Any) -> dict[str, Any] | None:
    if not probe(tp):
        return None
    hints = _HINTS.get(tp)
    if hints is None:
        resolved = typing.get_type_hints(tp)
        hints = _HINTS[tp] = {f.name: resolved.get(f.name, Any) for f in dataclasses.fields(tp)}
    return hints


def error_lines(exc: Any) -> list[str]:
    """A pydantic ValidationError as ``"path: message"`` lines."""
    return [error_line(e["loc"], e["msg"]) for e in exc.errors()]


class DataclassAdapter(PartialParsing, Generic[D]):
    """A dataclass as a SchemaAdapter."""

    def __init__(self, tp: type[D]) -> None:
        self._pydantic = import_optional("pydantic", install="pydantic", flavour="dataclass")
        self._adapter = self._pydantic.TypeAdapter(tp)
        self.python_type = tp
        self.name = tp.__name__

    def json_schema(self, strict: bool = False) -> dict[str, Any]:
        """The JSON Schema of the type (``strict=True``: the OpenAI strict form)."""
        schema: dict[str, Any] = self._adapter.json_schema()
        return strict_json_schema(schema) if strict else schema

    def parse(self, text: str) -> D:
        """The answer as the declared type; invalid input raises ParseError."""
        try:
            parsed: D = self._adapter.validate_json(strip_code_fence(text))
        except self._pydantic.ValidationError as exc:
            raise self._error(exc, text, f"the answer does not match {self.name}") from exc
        decode_json(text)  # what pydantic accepted loosely: a repeated key, NaN, 1e400
        return parsed

    def _error(self, exc: Any, raw: str, what: str) -> ParseError:
        errors = error_lines(exc)
        return ParseError(f"{what}: {'; '.join(errors)}", raw=raw, errors=errors)

    def partial_from(self, data: Any, cache: PartialCache | None) -> Any:
        """The partial object for JSON ``data``, built without validation."""
        return structure(self.python_type, data, fields_of=_fields, make=bare_instance, cache=cache)

    def serialize(self, obj: Any) -> Any:
        """``obj`` as JSON-ready data."""
        return self._adapter.dump_python(obj, mode="json")

    def validate(self, value: Any) -> D:
        """A Python value (a tool's return) checked and returned as the declared type."""
        if isinstance(value, self.python_type):
            value = dataclasses.asdict(value)  # type: ignore[call-overload]
        try:
            return self._adapter.validate_python(value)  # type: ignore[no-any-return]
        except self._pydantic.ValidationError as exc:
            raise self._error(
                exc, repr(value), f"{value!r:.200} is not a valid {self.name}"
            ) from exc

    def __repr__(self) -> str:
        return f"<DataclassAdapter {self.name}>"
