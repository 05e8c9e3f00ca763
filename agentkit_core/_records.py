"""Quicker initialisers for the frozen, slotted dataclasses a turn makes by the dozen.

A frozen dataclass's generated ``__init__`` writes each field through ``object.__setattr__``
(its own ``__setattr__`` refuses), which looks the attribute up anew every time. The slot's
own setter, taken once, skips that: about 40 % of the cost of a record, and a turn builds a
request, messages, results, usages and decisions. :func:`quick_init` gives a class such an
``__init__`` with the same parameters, defaults and default factories; everything else the
dataclass made (``__eq__``, ``__repr__``, ``__hash__``, pickling, ``replace``) is unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

T = TypeVar("T", bound=type)


class _Factory:
    """The default of a field with a default factory, shown as dataclasses shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def quick_init(cls: T) -> T:
    """Give ``cls`` (a frozen dataclass with slots) an ``__init__`` that writes its slots.

    Refuses, at import, a class it would get wrong: not frozen, without slots, or with
    ``__post_init__``, init-only, keyword-only or ``init=False`` fields.
    """
    params = getattr(cls, "__dataclass_params__", None)
    fields = dataclasses.fields(cls) if params is not None else ()
    generated = cls.__init__  # type: ignore[misc]
    code = getattr(generated, "__code__", None)
    # what the dataclass's own __init__ takes: every field, positionally, and nothing else
    # (an InitVar would be one more, an init=False field one fewer, a kw_only field keyword-only)
    takes = () if code is None else code.co_varnames[1 : code.co_argcount]
    if (
        params is None
        or not params.frozen
        or "__slots__" not in cls.__dict__
        or hasattr(cls, "__post_init__")
        or code is None
        or code.co_kwonlyargcount
        or list(takes) != [f.name for f in fields]
    ):
        raise TypeError(
            f"quick_init takes a frozen dataclass with slots and plain positional fields, not "
            f"{cls.__qualname__}"
        )
    env: dict[str, object] = {"_FACTORY": _FACTORY}
    signature: list[str] = []
    body: list[str] = []
    for f in fields:
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        value = f.name
        if f.default is not dataclasses.MISSING:
            env[f"_default_{f.name}"] = f.default
            signature.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory_{f.name}"] = f.default_factory
            signature.append(f"{f.name}=_FACTORY")
            value = f"_factory_{f.name}() if {f.name} is _FACTORY else {f.name}"
        else:
            signature.append(f.name)
        body.append(f"    _set_{f.name}(self, {value})")
    source = f"def __init__(self, {', '.join(signature)}):\n" + "\n".join(body) + "\n"
    exec(source, env)  # as dataclasses itself makes __init__
    init = env["__init__"]
    init.__qualname__ = generated.__qualname__  # type: ignore[attr-defined]
    init.__module__ = generated.__module__
    init.__annotations__ = dict(generated.__annotations__)  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[misc]
    return cls
