"""The flavour's probe, apart from its adapter: the package and the adapter both use it."""

from __future__ import annotations

import dataclasses
from typing import Any


def probe(tp: Any) -> bool:
    """Whether ``tp`` is a dataclass (the class, not an instance)."""
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)
