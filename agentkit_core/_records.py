"""Quicker initialisers for the frozen, slotted dataclasses a turn makes by the dozen.

A frozen dataclass's generated ``__init__`` writes each field through ``object.__setattr__``
(its own ``__setattr__`` refuses), which looks the attribute up anew every time. The slot's
own setter, taken once, skips that: about 40 % of the cost of a record, and a turn builds a
request, messages, results, usages and decisions. :func:`quick_init` gives a class such an
``__init__`` with the same parameters, defaults and default factories; everything else the
dataclass made (``__eq__``, ``__repr__``, ``__hash__``, pickling, ``replace``) is unchanged.
:func:`record` gives a record with plain fields that ``__init__`` itself, compiled on first
use (most records a process imports it never builds), and a frozen one its
``__setattr__``/``__delattr__`` as closures: at most one ``exec`` where dataclasses takes three,
the most of what importing the core costs.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
from collections.abc import Callable
from types import FunctionType
from typing import TYPE_CHECKING
from typing import Protocol
from typing import TypeVar
from typing import cast

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
    if getattr(vars(cls).get("__init__"), "__slot_init__", False):
        return cls  # a record made frozen by ``record``: its __init__ writes the slots already
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
    cls.__init__ = _slot_init(cls, fields)  # type: ignore[misc]
    return cls


def _slot_init(
    cls: type, fields: tuple[dataclasses.Field[object], ...], frozen: bool = True
) -> Callable[..., None]:
    """An ``__init__`` taking ``fields`` positionally, as the dataclass's, writing the slots.

    Without slots (a frozen record's) it writes the instance's ``__dict__``, where the frozen
    dataclass's own ``__init__`` puts them through ``object.__setattr__`` (three times slower; a
    session item is made three times a recorded turn); a field the class holds a data
    descriptor for is still written through ``object.__setattr__``. Not frozen, it assigns each
    field (``self.name = value``), as the dataclass's own does.
    """
    env: dict[str, object] = {"_FACTORY": _FACTORY}
    signature: list[str] = []
    body: list[str] = []
    slotted = frozen and "__slots__" in vars(cls)
    env["_object_setattr"] = object.__setattr__  # without slots, as a frozen dataclass writes
    for f in fields:
        if slotted:
            env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        value = f.name
        if not f.init:  # not a parameter: its default, as dataclasses' __init__ writes it
            if f.default is not dataclasses.MISSING:
                env[f"_default_{f.name}"] = f.default
                value = f"_default_{f.name}"
            elif f.default_factory is not dataclasses.MISSING:
                env[f"_factory_{f.name}"] = f.default_factory
                value = f"_factory_{f.name}()"
            else:
                continue
        elif f.default is not dataclasses.MISSING:
            env[f"_default_{f.name}"] = f.default
            signature.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory_{f.name}"] = f.default_factory
            signature.append(f"{f.name}=_FACTORY")
            value = f"_factory_{f.name}() if {f.name} is _FACTORY else {f.name}"
        else:
            signature.append(f.name)
        if not frozen:
            body.append(f"    self.{f.name} = {value}")
        elif slotted:
            body.append(f"    _set_{f.name}(self, {value})")
        elif hasattr(type(getattr(cls, f.name, None)), "__set__"):
            body.append(f"    _object_setattr(self, {f.name!r}, {value})")
        else:
            body.append(f"    _dict[{f.name!r}] = {value}")
    if hasattr(cls, "__post_init__"):  # a record's checks (quick_init refuses such a class)
        body.append("    self.__post_init__()")
    if any("_dict[" in line for line in body):
        body.insert(0, "    _dict = self.__dict__")
    source = f"def __init__(self, {', '.join(signature)}):\n" + "\n".join(body or ["    pass"])
    exec(source + "\n", env)  # as dataclasses itself makes __init__
    init = cast(FunctionType, env["__init__"])
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {**{f.name: f.type for f in fields if f.init}, "return": None}
    setattr(init, "__slot_init__", slotted)  # noqa: B010  # quick_init leaves it be
    return cast("Callable[..., None]", init)


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
            # a record with plain fields gets its __init__ here, compiled when first wanted, and
            # a frozen one its __setattr__ and __delattr__: dataclasses compiles all three at once
            quick = not kw_only and _plain(cls)
            made: type = dataclasses.dataclass(  # type: ignore[call-overload]
                cls,
                init=not quick,
                repr=False,
                eq=False,
                frozen=frozen and not quick,
                slots=slots,
                kw_only=kw_only,
            )
            fields = dataclasses.fields(made)
            if quick:
                made.__init__ = _LazyInit(made, fields, frozen)
                if frozen:
                    _freeze(made, fields)
                if not own.get("__doc__"):  # dataclasses wrote it from a signature without init
                    made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(
                        " -> None", ""
                    )
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


def _plain(cls: type) -> bool:
    """Whether ``cls``'s fields are what :func:`_slot_init` writes: positional, no more, no less.

    Not for a class with a dataclass base, its own ``__setattr__`` or
    ``__delattr__`` (which dataclasses refuses on a frozen one), an ``InitVar``, ``KW_ONLY``,
    a keyword-only field, a field named ``self``, or one without a default after one with a
    default (which dataclasses refuses, in its own words): those take dataclasses' own way.
    """
    if "__setattr__" in vars(cls) or "__delattr__" in vars(cls):
        return False
    if any("__dataclass_fields__" in vars(base) for base in cls.__mro__[1:]):
        return False
    defaulted = False
    for name, hint in vars(cls).get("__annotations__", {}).items():
        text = hint if isinstance(hint, str) else repr(hint)
        if name == "self" or "InitVar" in text or "KW_ONLY" in text:
            return False
        value = vars(cls).get(name, dataclasses.MISSING)
        if isinstance(value, dataclasses.Field):
            if value.kw_only is True:
                return False
            if not value.init:
                continue
            value = value.default_factory if value.default is dataclasses.MISSING else value
        if value is not dataclasses.MISSING:
            defaulted = True
        elif defaulted:
            return False
    return True


def _freeze(cls: type, fields: tuple[dataclasses.Field[object], ...]) -> None:
    """Make ``cls`` (made by dataclasses unfrozen, given its __init__) what ``frozen=True`` makes.

    The same refusals (``FrozenInstanceError``, for the class's own instances and its fields),
    pickling by the fields' values, and ``__dataclass_params__.frozen``, which ``replace`` and a
    subclass's checks read.
    """
    names = frozenset(f.name for f in fields)
    frozen_error = dataclasses.FrozenInstanceError

    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise frozen_error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise frozen_error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    for method in (__setattr__, __delattr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        setattr(cls, method.__name__, method)
    own = vars(cls)
    if "__slots__" in own and "__getstate__" not in own:  # no __dict__ to pickle
        cls.__getstate__ = _frozen_getstate  # type: ignore[method-assign, assignment]
    if "__slots__" in own and "__setstate__" not in own:
        cls.__setstate__ = _frozen_setstate  # type: ignore[attr-defined]
    cls.__dataclass_params__.frozen = True  # type: ignore[attr-defined]


class _LazyInit:
    """A record's ``__init__`` until it is first wanted, then :func:`_slot_init`'s.

    Compiling an ``__init__`` is one ``exec`` (~0.7 M instructions) and a first run builds
    few of the records it imports, so each is compiled when first called or looked up, and
    put in this one's place. It binds as a function binds (itself from the class, a bound
    method from an instance), so a call, ``super().__init__``, ``inspect.signature`` and
    ``help`` all get the compiled function.
    """

    __slots__ = ("__slot_init__", "_cls", "_fields", "_frozen")

    def __init__(
        self, cls: type, fields: tuple[dataclasses.Field[object], ...], frozen: bool
    ) -> None:
        self.__slot_init__ = frozen and "__slots__" in vars(cls)  # as the compiled one's
        self._cls = cls
        self._fields = fields
        self._frozen = frozen

    def __get__(self, obj: object, owner: type | None = None) -> Callable[..., None]:
        init = vars(self._cls)["__init__"]
        if init is self:
            init = _slot_init(self._cls, self._fields, self._frozen)
            self._cls.__init__ = init  # type: ignore[misc]
        return cast("Callable[..., None]", init.__get__(obj, owner))


def _frozen_getstate(self: object) -> list[object]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]  # type: ignore[arg-type]


def _frozen_setstate(self: object, state: list[object]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=False):  # type: ignore[arg-type]
        object.__setattr__(self, f.name, value)


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
