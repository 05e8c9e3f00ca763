"""Giving exported objects their public module path, without breaking their type hints."""

from __future__ import annotations

import builtins
import inspect
import sys
import typing
from collections.abc import Iterable
from collections.abc import Mapping
from types import FunctionType
from typing import Any

#: The package this module belongs to, which Python has always imported before it: a deferred
#: hint (see ``pin``), ``agentkit_core.<name>``, is evaluated in this module's namespace.
agentkit_core = sys.modules[__name__.rpartition(".")[0]]


def publish(
    names: Iterable[str],
    namespace: Mapping[str, Any],
    module: str,
    where: Mapping[str, str] | None = None,
) -> None:
    """Set ``__module__`` to ``module`` on every class and function named in ``names``.

    ``typing.get_type_hints`` (and pydantic, which a user's model with a ``Message`` field
    needs) resolves a class's string annotations in the namespace of ``cls.__module__``. The
    public module does not hold every private name those annotations use, so each such one is
    first pinned to the module it was written in, as a ``ForwardRef`` that evaluates there.
    ``namespace`` holds the objects being published (those names resolve from ``module``);
    ``where`` names the module that defines each other public name, for an annotation its own
    module imports only for the type checker (a circular import). If that module is not loaded,
    the hint becomes ``agentkit_core.<name>``, evaluated in this module: resolving it loads the
    module then, so publishing ``ModelRequest`` does not import ``RunContext``'s module (and
    asyncio) for a hint nobody may read.
    """
    pinned: dict[tuple[str, str], typing.ForwardRef] = {}

    def pin(value: Any, home: str) -> Any:
        if not isinstance(value, str) or value in namespace or hasattr(builtins, value):
            return value  # resolves as well from the public module
        if where and value in where and not hasattr(sys.modules.get(home), value):
            home = where[value]
            if home not in sys.modules:  # loaded by the package's __getattr__ when evaluated
                value, home = f"{module}.{value}", __name__
        ref = pinned.get((home, value))
        if ref is None:
            ref = typing.ForwardRef(value, is_argument=False, is_class=True, module=home)
            pinned[home, value] = ref
        return ref

    for name in names:
        obj = namespace[name]
        # ``type(obj)``, not ``isinstance``: on Python 3.10 a generic alias such as
        # ``Callable[[str], None]`` forwards ``__class__``, so ``isinstance(alias, type)`` holds,
        # yet its ``__module__`` cannot be set. An alias is published under its name only.
        if issubclass(type(obj), type):
            home = obj.__module__
            own = inspect.get_annotations(obj)
            if own:
                obj.__annotations__ = {key: pin(value, home) for key, value in own.items()}
            # a dataclass field keeps its own copy of the annotation, which pydantic reads
            for field in (getattr(obj, "__dataclass_fields__", None) or {}).values():
                field.type = pin(field.type, home)
        elif not isinstance(obj, FunctionType):
            continue
        obj.__module__ = module
