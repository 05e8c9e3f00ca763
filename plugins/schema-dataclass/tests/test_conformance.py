"""The dataclass flavour passes the SchemaAdapter conformance suite (plain and slotted)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentkit_core import PluginManager
from agentkit_core.plugin import SchemaAdapter
from agentkit_core.plugin import adapt
from agentkit_core.testing import SchemaAdapterConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


@dataclass
class Person:
    name: str
    email: str


@dataclass
class Report:
    title: str
    count: int
    score: float
    done: bool
    tags: list[str]
    owner: Person
    note: str | None = None


@dataclass(frozen=True, slots=True)
class FrozenPerson:
    name: str
    email: str


@dataclass(frozen=True, slots=True)
class FrozenReport:
    title: str
    count: int
    score: float
    done: bool
    tags: list[str]
    owner: FrozenPerson
    note: str | None = None


class TestDataclassAdapter(SchemaAdapterConformance):
    def make_adapter(self) -> SchemaAdapter[Any]:
        return adapt(Report, manager=PM)


class TestFrozenSlottedDataclassAdapter(SchemaAdapterConformance):
    max_examples = 5

    def make_adapter(self) -> SchemaAdapter[Any]:
        return adapt(FrozenReport, manager=PM)
