"""The JSON Schema flavour of typed output: a raw JSON Schema dict; answers stay plain data.

Probe rank 40, last: any mapping is taken as a JSON Schema. Validation uses the
``jsonschema`` package (the validator class the schema's ``$schema`` names, Draft 2020-12 by
default), imported on first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    from agentkit_core.plugin import RegisterSchemaAdapter

    from ._adapter import JSONSchemaAdapter as JSONSchemaAdapter

RANK = 40

#: The adapter (a ``PartialParsing``, which loads the core's typed-output machinery) is
#: imported when a run first asks this flavour for one, not when the plugin loads.
__getattr__ = lazy_attributes(__name__, {"JSONSchemaAdapter": "._adapter"})


def probe(tp: Any) -> bool:
    """Whether ``tp`` is a mapping (taken as a JSON Schema)."""
    return isinstance(tp, Mapping)


def _make(tp: Any) -> JSONSchemaAdapter:
    from ._adapter import JSONSchemaAdapter

    return JSONSchemaAdapter(tp)


@hookimpl
def agentkit_register_schema_adapters(register: RegisterSchemaAdapter) -> None:
    """Offer the JSON Schema flavour."""
    register("jsonschema", probe, _make, rank=RANK)
