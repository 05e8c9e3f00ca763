"""The attrs flavour passes the SchemaAdapter conformance suite (attrs.define and attr.s)."""

from __future__ import annotations

from typing import Any

import attr
import attrs

from agentkit_core import PluginManager
from agentkit_core.plugin import SchemaAdapter
from agentkit_core.plugin import adapt
from agentkit_core.testing import SchemaAdapterConformance

#: A fresh manager for the helpers below, never the process-wide one.
PM = PluginManager()


@attrs.define
class Person:
    name: str
    email: str


@attrs.define
class Report:
    title: str
    count: int
    score: float
    done: bool
    tags: list[str]
    owner: Person
    note: str | None = None


@attr.s(auto_attribs=True, frozen=True)
class OldPerson:
    name: str
    email: str


@attr.s(auto_attribs=True, frozen=True)
class OldReport:
    title: str
    count: int
    score: float
    done: bool
    tags: list[str]
    owner: OldPerson
    note: str | None = None


class TestAttrsAdapter(SchemaAdapterConformance):
    def make_adapter(self) -> SchemaAdapter[Any]:
        return adapt(Report, manager=PM)


class TestOldStyleFrozenAttrsAdapter(SchemaAdapterConformance):
    max_examples = 5

    def make_adapter(self) -> SchemaAdapter[Any]:
        return adapt(OldReport, manager=PM)
