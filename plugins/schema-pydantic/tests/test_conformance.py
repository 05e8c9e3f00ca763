"""The pydantic flavour passes the SchemaAdapter conformance suite."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentkit_core import PluginManager
from agentkit_core.plugin import SchemaAdapter
from agentkit_core.plugin import adapt
from agentkit_core.testing import SchemaAdapterConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


class Person(BaseModel):
    name: str
    email: str


class Report(BaseModel):
    title: str
    count: int
    score: float
    done: bool
    tags: list[str]
    owner: Person
    note: str | None = None


class TestPydanticAdapter(SchemaAdapterConformance):
    def make_adapter(self) -> SchemaAdapter[Any]:
        return adapt(Report, manager=PM)

    def has(self, obj: Any, name: str) -> bool:
        return name in obj.model_fields_set  # defaults are filled in, but not "set"
