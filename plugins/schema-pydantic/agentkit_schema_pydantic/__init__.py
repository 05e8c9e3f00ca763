"""The pydantic flavour of typed output: ``BaseModel`` subclasses.

Probe rank 10: pydantic models also pass a dataclass-style probe (pydantic uses
``dataclass_transform``), so this flavour is asked before the dataclass one. pydantic is
imported only when the flavour is first used.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:
    from agentkit_core.plugin import RegisterSchemaAdapter

    from ._adapter import PydanticAdapter as PydanticAdapter
    from ._adapter import error_lines as error_lines

RANK = 10

#: The adapter (a ``PartialParsing``, which loads the core's typed-output machinery) is
#: imported when a run first asks this flavour for one, not when the plugin loads.
__getattr__ = lazy_attributes(
    __name__, {"PydanticAdapter": "._adapter", "error_lines": "._adapter"}
)


def probe(tp: Any) -> bool:
    """Whether ``tp`` is a pydantic model class (pydantic must already be imported)."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def _make(tp: Any) -> PydanticAdapter[Any]:
    from ._adapter import PydanticAdapter

    return PydanticAdapter(tp)


@hookimpl
def agentkit_register_schema_adapters(register: RegisterSchemaAdapter) -> None:
    """Offer the pydantic flavour."""
    register("pydantic", probe, _make, rank=RANK)
