"""The attrs flavour of typed output: classes made with ``attrs.define`` / ``attr.s``.

Probe rank 20. The probe looks for ``__attrs_attrs__`` and imports nothing. On first use the
flavour imports attrs and mirrors the class (and the attrs classes its fields use) as a
pydantic model, which gives the JSON Schema and the validation; the validated data is then
built back into the attrs class through its ``__init__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

from ._probe import probe as probe

if TYPE_CHECKING:
    from agentkit_core.plugin import RegisterSchemaAdapter

    from ._adapter import AttrsAdapter as AttrsAdapter
    from ._adapter import error_lines as error_lines

RANK = 20

#: The adapter (a ``PartialParsing``, which loads the core's typed-output machinery) is
#: imported when a run first asks this flavour for one, not when the plugin loads.
__getattr__ = lazy_attributes(__name__, {"AttrsAdapter": "._adapter", "error_lines": "._adapter"})


def _make(tp: Any) -> AttrsAdapter[Any]:
    from ._adapter import AttrsAdapter

    return AttrsAdapter(tp)


@hookimpl
def agentkit_register_schema_adapters(register: RegisterSchemaAdapter) -> None:
    """Offer the attrs flavour."""
    register("attrs", probe, _make, rank=RANK)
