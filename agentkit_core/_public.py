"""Giving exported objects their public module path, without breaking their type hints."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterable
from collections.abc import Mapping
from types import FunctionType
from typing import Any


def publish(names: Iterable[str], namespace: Mapping[str, Any], module: str) -> None:
    """Set ``__module__`` to ``module`` on every class and function named in ``names``.

    ``typing.get_type_hints`` (and pydantic, which a user's model with a ``Message`` field
    needs) resolves a class's string annotations in the namespace of ``cls.__module__``. The
    public module does not hold the private names those annotations use, so each one is
    first pinned to the module it was written in, as a ``ForwardRef`` that evaluates there.
    """
    for name in names:
        obj = namespace[name]
        if isinstance(obj, type):
            _pin_annotations(obj)
        elif not isinstance(obj, FunctionType):
            continue
        obj.__module__ = module


def _pin_annotations(cls: type) -> None:
    home = cls.__module__

    def pinned(value: Any) -> Any:
        if isinstance(value, str):
            return typing.ForwardRef(value, is_argument=False, is_class=True, module=home)
        return value

    own = inspect.get_annotations(cls)
    if own:
        cls.__annotations__ = {key: pinned(value) for key, value in own.items()}
    # dataclass fields keep their own copy of the annotation, which pydantic reads
    for field in (cls.__dict__.get("__dataclass_fields__") or {}).values():
        field.type = pinned(field.type)
