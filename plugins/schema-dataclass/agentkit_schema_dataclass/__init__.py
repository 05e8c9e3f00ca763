"""The dataclass flavour of typed output: stdlib ``@dataclass`` classes.

Probe rank 30, after pydantic (whose models pass a dataclass-style probe) and attrs.
Validation and the JSON Schema come from pydantic's ``TypeAdapter``, imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

from ._probe import probe as probe

if TYPE_CHECKING:
    from agentkit_core.plugin import RegisterSchemaAdapter

    from ._adapter import DataclassAdapter as DataclassAdapter
    from ._adapter import error_lines as error_lines

RANK = 30

#: The adapter (a ``PartialParsing``, which loads the core's typed-output machinery) is
#: imported when a run first asks this flavour for one, not when the plugin loads.
__getattr__ = lazy_attributes(
    __name__, {"DataclassAdapter": "._adapter", "error_lines": "._adapter"}
)


def _make(tp: Any) -> DataclassAdapter[Any]:
    from ._adapter import DataclassAdapter

    return DataclassAdapter(tp)


@hookimpl
def agentkit_register_schema_adapters(register: RegisterSchemaAdapter) -> None:
    """Offer the dataclass flavour."""
    register("dataclass", probe, _make, rank=RANK)
