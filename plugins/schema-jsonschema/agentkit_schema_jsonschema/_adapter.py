"""``JSONSchemaAdapter``, loaded when the flavour is first used (see the package's docstring).

Subclassing the core's ``PartialParsing`` loads its typed-output machinery, which a run
without a typed output does not use, so the package imports this module only on demand.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from agentkit_core.plugin import ParseError
from agentkit_core.plugin import PartialCache
from agentkit_core.plugin import PartialParsing
from agentkit_core.plugin import decode_json
from agentkit_core.plugin import error_line
from agentkit_core.plugin import import_optional
from agentkit_core.plugin import strict_json_schema

_PYTHON_TYPES: dict[str, type] = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
}


#: Values of no depth: a schema that recurses on one of them loops without consuming anything.
_PROBES: tuple[Any, ...] = ({}, [], "", 0, None, True)

#: Below this depth a RecursionError while validating is a $ref loop, not a deep value.
_SHALLOW = 50


def _depth(value: Any) -> int:
    """How deeply ``value`` nests, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


class JSONSchemaAdapter(PartialParsing):
    """A JSON Schema dict as a SchemaAdapter; parsed values are plain Python data."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        jsonschema = import_optional("jsonschema", install="jsonschema", flavour="jsonschema")
        self.schema = copy.deepcopy(dict(schema))
        cls = jsonschema.validators.validator_for(self.schema, jsonschema.Draft202012Validator)
        try:
            cls.check_schema(self.schema)
        except jsonschema.SchemaError as exc:
            from agentkit_core.plugin import UnsupportedTypeError

            raise UnsupportedTypeError(
                f"output={dict(schema)!r:.200} is not a valid JSON Schema: {exc.message}"
            ) from exc
        from referencing import Registry  # installed with jsonschema
        from referencing.exceptions import Unresolvable

        # An explicit registry: jsonschema's default one fetches a remote $ref with urlopen
        # (no timeout), so a schema could make the host call any URL. Only the schema's own
        # resources and the JSON Schema meta-schemas resolve.
        self._validator = cls(self.schema, registry=Registry())

        self._unresolvable: type[Exception] = Unresolvable
        for probe in _PROBES:  # a $ref loop that consumes nothing fails on any value
            self._errors(probe, repr(schema))
        self.python_type: Any = _PYTHON_TYPES.get(self.schema.get("type", ""), object)
        self.name = str(self.schema.get("title", "output"))

    def json_schema(self, strict: bool = False) -> dict[str, Any]:
        """The JSON Schema of the type (``strict=True``: the OpenAI strict form)."""
        return strict_json_schema(self.schema) if strict else copy.deepcopy(self.schema)

    def _errors(self, value: Any, raw: str) -> list[str]:
        """The validation errors of ``value``, as ``"path: message"`` lines.

        A ``$ref`` that cannot be resolved (never fetched: only the schema's own ``$defs``
        and ids count) or that loops without consuming the value is the schema's fault and
        raises UnsupportedTypeError; a value nested too deeply to check is the answer's.
        """
        from agentkit_core.plugin import UnsupportedTypeError

        try:
            found = sorted(self._validator.iter_errors(value), key=lambda e: list(e.path))
        except self._unresolvable as exc:
            raise UnsupportedTypeError(
                f"output={self.schema!r:.200} has a $ref that cannot be resolved ({exc}); "
                "a remote schema is never fetched: copy it under $defs and refer to it there"
            ) from None
        except RecursionError:
            if _depth(value) < _SHALLOW:
                raise UnsupportedTypeError(
                    f"output={self.schema!r:.200} has a $ref loop that never consumes the "
                    "value (such as {'$ref': '#'}): give each loop a property or item to "
                    "descend into"
                ) from None
            what = "the answer is nested too deeply to check against the schema"
            raise ParseError(
                f"{what}: {raw[:200]!r}", raw=raw, errors=[f"(root): {what}"]
            ) from None
        return [error_line(list(e.absolute_path), e.message) for e in found]

    def _check(self, value: Any, raw: str, what: str) -> Any:
        errors = self._errors(value, raw)
        if errors:
            raise ParseError(f"{what}: {'; '.join(errors)}", raw=raw, errors=errors)
        return value

    def parse(self, text: str) -> Any:
        """The answer as the declared type; invalid input raises ParseError."""
        return self._check(decode_json(text), text, f"the answer does not match {self.name}")

    def partial_from(self, data: Any, cache: PartialCache | None) -> Any:
        """The partial object for JSON ``data``, built without validation."""
        return data

    def serialize(self, obj: Any) -> Any:
        """``obj`` as JSON-ready data."""
        return obj

    def validate(self, value: Any) -> Any:
        """A Python value (a tool's return) checked and returned as the declared type."""
        return self._check(value, repr(value), f"{value!r:.200} is not a valid {self.name}")

    def __repr__(self) -> str:
        return f"<JSONSchemaAdapter {self.name}>"
