"""The JSON Schema flavour passes the SchemaAdapter conformance suite."""

from __future__ import annotations

from typing import Any

from agentkit_core import PluginManager
from agentkit_core.plugin import SchemaAdapter
from agentkit_core.plugin import adapt
from agentkit_core.testing import SchemaAdapterConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()

TEXT = {"type": "string"}
REPORT = {
    "title": "Report",
    "type": "object",
    "properties": {
        "title": TEXT,
        "count": {"type": "integer"},
        "score": {"type": "number"},
        "done": {"type": "boolean"},
        "tags": {"type": "array", "items": TEXT},
        "owner": {"$ref": "#/$defs/Person"},
        "note": {"anyOf": [TEXT, {"type": "null"}], "default": None},
    },
    "required": ["title", "count", "score", "done", "tags", "owner"],
    "$defs": {
        "Person": {
            "type": "object",
            "properties": {"name": TEXT, "email": TEXT},
            "required": ["name", "email"],
        }
    },
}


class TestJSONSchemaAdapter(SchemaAdapterConformance):
    def make_adapter(self) -> SchemaAdapter[Any]:
        return adapt(REPORT, manager=PM)
