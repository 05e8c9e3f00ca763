"""Values valid for a JSON Schema, for TestModel's tool arguments and typed answers."""

from __future__ import annotations

from typing import Any


def example_value(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A small value that satisfies ``schema`` (the common keywords; ``examples`` first)."""
    defs = defs if defs is not None else schema.get("$defs", schema.get("definitions", {}))
    if "$ref" in schema:
        return example_value(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if schema.get("examples"):
        return schema["examples"][0]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example_value(options[0], defs)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(part)
        return example_value(merged, defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties", {})
        return {name: example_value(sub, defs) for name, sub in props.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1)
        return [example_value(schema.get("items", {}), defs) for _ in range(count)]
    if kind == "string":
        length = max(int(schema.get("minLength", 0)), 1)
        return {"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01"}.get(
            schema.get("format", ""), "x" * length
        )
    if kind == "integer":
        return int(schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "x"
