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
import operator
import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Protocol
from typing import TypeVar

__all__ = ["quick_init", "record"]

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


if TYPE_CHECKING:  # to the type checker it is the dataclass it makes
    from dataclasses import dataclass as record
else:

    def record(
        cls: T | None = None, /, *, frozen: bool = False, slots: bool = False, kw_only: bool = False
    ) -> T | Callable[[T], T]:
        """``@dataclass`` whose ``__repr__``, ``__eq__`` and ``__hash__`` are shared, not compiled.

        ``dataclasses`` compiles each method it makes from source with its own ``exec``: a frozen
        record takes six, and a first run imported ~60 records. These three behave as the ones
        ``@dataclass`` (eq and repr on, its defaults) makes: the same text (``Usage(input_tokens=3,
        ...)``, a recursive repr shown as ``...``), equality only between instances of the very same
        class, over the compared fields in order, the hash of the same tuple when the record is
        frozen, unhashable when it is not. A class that writes one of them itself keeps its own.
        """

        def wrap(cls: T) -> T:
            own = dict(cls.__dict__)
            # as dataclasses reads it: a class defining __eq__ alone has __hash__ None, not its own
            explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
            made: type = dataclasses.dataclass(  # type: ignore[call-overload]
                cls, repr=False, eq=False, frozen=frozen, slots=slots, kw_only=kw_only
            )
            fields = dataclasses.fields(made)
            methods: dict[str, object] = {}
            if "__repr__" not in own:
                shown = [f.name for f in fields if f.repr]
                template = "(" + ", ".join(f"{name}={{!r}}" for name in shown) + ")"
                methods["__record_repr__"] = (template, _key(shown))
                methods["__repr__"] = _record_repr
            if "__eq__" not in own:
                methods["__record_key__"] = _key([f.name for f in fields if f.compare])
                methods["__eq__"] = _record_eq
            if not explicit_hash:
                hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
                methods["__record_hash_key__"] = _key(hashed)
                methods["__hash__"] = _record_hash if frozen else None
            for name, value in methods.items():
                setattr(made, name, value)
            return made  # type: ignore[return-value]

        return wrap if cls is None else wrap(cls)


def _key(names: list[str]) -> Callable[[object], tuple[object, ...]]:
    """The tuple of ``names``' values of a record, as the generated methods build it."""
    if len(names) >= 2:
        return operator.attrgetter(*names)
    if names:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


class _Shared(Protocol):
    """What :func:`record` keeps on a class for its shared methods."""

    __record_repr__: tuple[str, Callable[[object], tuple[object, ...]]]
    __record_key__: Callable[[object], tuple[object, ...]]
    __record_hash_key__: Callable[[object], tuple[object, ...]]


@reprlib.recursive_repr()
def _record_repr(self: _Shared) -> str:
    template, values = self.__class__.__record_repr__  # "(a={!r}, b={!r})" and its values
    return self.__class__.__qualname__ + template.format(*values(self))


def _record_eq(self: _Shared, other: object) -> object:  # a bool, or NotImplemented
    if other.__class__ is self.__class__:
        key = self.__class__.__record_key__  # from the class: a function stays unbound
        return key(self) == key(other)
    return NotImplemented


def _record_hash(self: _Shared) -> int:
    return hash(self.__class__.__record_hash_key__(self))
