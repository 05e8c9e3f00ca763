"""Lazy public names for a plugin's entry module (PEP 562), so loading the plugin stays light."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any


def lazy_attributes(module: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports each name of ``table`` from its module on first use.

    ``table`` maps a public name to the module defining it, relative to ``module`` (``"._model"``).
    ``agentkit plugins list`` imports every plugin's entry module; with
    ``__getattr__ = lazy_attributes(__name__, {...})`` there, the implementation (and what it
    imports) loads only when a name is used. A name found is kept in the module, so the next use
    is a plain attribute read.
    """

    def __getattr__(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where, module), name)
        setattr(sys.modules[module], name, value)
        return value

    return __getattr__


def loaded_instance(value: object, *classes: tuple[str, str]) -> bool:
    """Whether ``value`` is an instance of one of ``(module, class)``, of modules imported.

    No value is an instance of a class whose module was never imported, so asking needs no
    import: a run that uses none of them does not load them.
    """
    for module, name in classes:
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(value, getattr(loaded, name)):
            return True
    return False
