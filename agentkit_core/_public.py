"""The doors' lazy exports: each public name imported on first use, under its public path.

``agentkit_core`` (for agent builders) and ``agentkit_core.plugin`` (for plugin authors) each
hold a table, ``_EXPORTS``, of their names under the private modules defining them, and a
module ``__getattr__`` (PEP 562) that calls :func:`resolve`. Importing a door imports none of
the modules behind it, nor this one: the first name used does.
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import re
import sys
import typing
import warnings
from collections.abc import Iterable
from collections.abc import Mapping
from functools import cache
from importlib import import_module
from types import CodeType
from types import FunctionType
from types import ModuleType
from typing import Any

#: The package this module belongs to, which Python has always imported before it: a deferred
#: hint (see ``pin``), ``agentkit_core.<name>``, is evaluated in this module's namespace.
agentkit_core = sys.modules[__name__.rpartition(".")[0]]

#: The doors, by module name. A name stands in one door only.
DOORS = ("agentkit_core", "agentkit_core.plugin")

#: The (door, private module) pairs published so far (see ``_publish_loaded``).
_published: set[tuple[str, str]] = set()


def resolve(door: str, name: str) -> Any:
    """The body of a door's module ``__getattr__``: the public ``name``, imported on first use.

    Raises AttributeError naming the door for a name it does not export. A name that left the
    root door for another (``_LEFT_FOR`` there, and every name of ``agentkit_core.plugin``)
    still resolves there until 0.3, with a DeprecationWarning naming its new door.
    """
    if name.startswith("__"):  # ``__path__`` and the like, asked by every ``from door import``
        raise AttributeError(f"module {door!r} has no attribute {name!r}")
    doors = _doors()
    module = doors[door]._MODULE_OF.get(name)
    if module is None:
        moved = _new_door(door, name)
        if moved is None:
            raise AttributeError(f"module {door!r} has no attribute {name!r}")
        warnings.warn(
            f"{door}.{name} moved to {moved} (import it from there); this alias goes in 0.3",
            DeprecationWarning,
            stacklevel=3,  # the line that used the old name, past the door's __getattr__
        )
        return getattr(import_module(moved), name)
    value = getattr(import_module(f"agentkit_core.{module}"), name)
    _publish_loaded(doors)
    return value


def _new_door(door: str, name: str) -> str | None:
    """The door a name of the root door's 0.1 list now stands in, if it left."""
    if door != DOORS[0]:
        return None
    if name in _doors()[DOORS[1]]._MODULE_OF:
        return DOORS[1]
    left: Mapping[str, tuple[str, ...]] = agentkit_core._LEFT_FOR
    return next((new for new, names in left.items() if name in names), None)


@cache
def _doors() -> dict[str, ModuleType]:
    # by name: the doors call this module, so it must not import them at its top
    return {door: import_module(door) for door in DOORS}


@cache
def _homes() -> dict[str, tuple[str, str]]:
    """Each public name's defining module and door, for the hints ``publish`` pins."""
    return {
        name: (f"agentkit_core.{module}", door)
        for door, public in _doors().items()
        for name, module in public._MODULE_OF.items()
    }


def _publish_loaded(doors: Mapping[str, ModuleType]) -> None:
    """Publish the names of every private module loaded so far, and keep them in their door.

    Public classes and functions show their public path (``agentkit_core.Agent``) in reprs,
    tracebacks and docs, not the private module they live in (httpx does the same). A module
    is published once per door, when a name first resolved finds it loaded (importing one
    module loads those it imports), and its names are then kept in the door's namespace, so
    the next use of them is a plain attribute read.
    """
    progress = True
    while progress:  # publishing may import a module an annotation names: publish it too
        progress = False
        for door, public in doors.items():
            for module, names in public._EXPORTS.items():
                loaded = sys.modules.get(f"agentkit_core.{module}")
                if (door, module) in _published or loaded is None or _initializing(loaded):
                    continue
                objects = {name: getattr(loaded, name) for name in names}
                publish(names, objects, door, _homes())
                vars(public).update(objects)
                _published.add((door, module))
                progress = True


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
#: A hint's names, passing over its string literals (``Literal["a b"]``) and numbers: a
#: tokenizer for type expressions (``tokenize`` compiles ~10 ms of patterns on first use).
_NAME_TOKEN = re.compile(
    r"""'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*"|\d[\w.]*|([A-Za-z_]\w*)"""
)


def _spelt_out(hint: str, home: str, where: Mapping[str, tuple[str, str]]) -> tuple[str, str]:
    """A compound hint (``RunContext | None``) and the module to evaluate it in.

    Evaluated in ``home`` as written, unless it names a public name ``home`` imports only for
    the type checker: then each name is spelt out by its module (``agentkit_core._models.X``)
    or, for such a public name, by its door (``agentkit_core.RunContext``), to be evaluated
    here, where the door loads the name's module only when the hint is read.
    """
    module = sys.modules[home]

    def missing(name: str) -> bool:
        return name in where and not hasattr(module, name) and not hasattr(builtins, name)

    if not any(missing(name) for name in _IDENTIFIER.findall(hint)):  # the usual case, and quick
        return hint, home
    names = [
        token
        for token in _NAME_TOKEN.finditer(hint)
        if token[1] is not None and not keyword.iskeyword(token[1])
    ]
    spelt = hint
    for token in reversed(names):  # from the end, so the earlier offsets still hold
        start, end, name = token.start(), token.end(), token[1]
        if spelt[:start].rstrip().endswith(".") or hasattr(builtins, name):
            continue  # an attribute (``abc.Callable``'s ``Callable``) or a builtin
        owner = where[name][1] if missing(name) else home
        spelt = f"{spelt[:start]}{owner}.{name}{spelt[end:]}"
    return spelt, __name__


def _initializing(module: Any) -> bool:
    """Whether ``module`` is still executing (a circular import): its names may not exist yet."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


if sys.version_info < (3, 14):
    #: ``ForwardRef``'s own slot for the compiled hint, which ``_Pin`` fills when first read.
    _FORWARD_CODE = typing.ForwardRef.__dict__["__forward_code__"]

    # ``_root``: typing refuses other subclasses (and typeshed calls ForwardRef final)
    class _Pin(typing.ForwardRef, _root=True):  # type: ignore[misc,call-arg]
        """A pinned hint: a ``ForwardRef`` compiled when first evaluated, not when made.

        A first run pins ~90 hints it never reads, each compile ~20 µs. The attributes are
        those ``ForwardRef.__init__`` sets (the same on 3.11 to 3.13), less the code.
        """

        __slots__ = ()

        def __init__(self, arg: str, module: str) -> None:
            self.__forward_arg__ = arg
            self.__forward_evaluated__ = False
            self.__forward_value__ = None
            self.__forward_is_argument__ = False
            self.__forward_is_class__ = True
            self.__forward_module__ = module

        @property
        def __forward_code__(self) -> CodeType:
            try:
                code: CodeType = _FORWARD_CODE.__get__(self)
            except AttributeError:
                code = compile(self.__forward_arg__, "<string>", "eval")
                _FORWARD_CODE.__set__(self, code)
            return code

        @__forward_code__.setter
        def __forward_code__(self, code: CodeType) -> None:  # copy and pickle set it
            _FORWARD_CODE.__set__(self, code)

else:  # pragma: no cover - 3.14's ForwardRef compiles when evaluated, and is final

    def _Pin(arg: str, module: str) -> typing.ForwardRef:
        return typing.ForwardRef(arg, is_argument=False, is_class=True, module=module)


def publish(
    names: Iterable[str],
    namespace: Mapping[str, Any],
    module: str,
    where: Mapping[str, tuple[str, str]] | None = None,
) -> None:
    """Set ``__module__`` to ``module`` on every class and function named in ``names``.

    ``typing.get_type_hints`` (and pydantic, which a user's model with a ``Message`` field
    needs) resolves a class's string annotations in the namespace of ``cls.__module__``. The
    public module does not hold every private name those annotations use, so each such one is
    first pinned to the module it was written in, as a ``ForwardRef`` that evaluates there.
    ``namespace`` holds the objects being published (those names resolve from ``module``);
    ``where`` names the module that defines each other public name, and its door, for an
    annotation its own module imports only for the type checker (a circular import). If that
    module is not loaded, the hint becomes ``<door>.<name>``, evaluated in this module:
    resolving it loads the module then, so publishing ``ModelRequest`` does not import
    ``RunContext``'s module (and asyncio) for a hint nobody may read.
    """
    pinned: dict[tuple[str, str], typing.ForwardRef] = {}

    def pin(value: Any, home: str) -> Any:
        if not isinstance(value, str) or value in namespace or hasattr(builtins, value):
            return value  # resolves as well from the public module
        if not value.isidentifier() and where:
            value, home = _spelt_out(value, home, where)
        if where and value in where and not hasattr(sys.modules.get(home), value):
            home, door = where[value]
            if home not in sys.modules:  # loaded by the door's __getattr__ when evaluated
                value, home = f"{door}.{value}", __name__
        ref = pinned.get((home, value))
        if ref is None:
            ref = _Pin(value, home)
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
