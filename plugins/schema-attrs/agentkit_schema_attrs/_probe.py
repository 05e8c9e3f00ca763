"""The flavour's probe, apart from its adapter: the package and the adapter both use it."""

from __future__ import annotations

import sys
from typing import Any


def probe(tp: Any) -> bool:
    """Whether ``tp`` is an attrs class (attrs must already be imported for one to exist)."""
    if sys.modules.get("attr") is None and sys.modules.get("attrs") is None:
        return False
    return isinstance(tp, type) and getattr(tp, "__attrs_attrs__", None) is not None
