"""Kinds of configuration values, and the checks that name the key, the place and the fix.

The config file, the plugin options and the request settings all check their tables here, so
every unknown key gets the same nearest-key message and every wrong value names the kind expected.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import sys
import types
import typing
from collections import abc
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from ._errors import ConfigError
from ._records import record

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


# ---------------------------------------------------------------------- kinds of values


@record(frozen=True, slots=True)
class Kind:
    """A type a configuration value may have: its name in messages, its check, its env reading.

    ``from_env(text, variable)`` turns an environment variable's text into the value; None means
    the kind cannot come from the environment.
    """

    name: str
    check: Callable[[Any], bool]
    from_env: Callable[[str, str], Any] | None = None


def split_names(value: str) -> tuple[str, ...]:
    """Names from an environment value: comma-, semicolon- or space-separated."""
    return tuple(n for n in value.replace(";", ",").replace(" ", ",").split(",") if n)


def env_bool(value: object, key: str, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ConfigError(
        f"{key} in {where} must be true or false (1/0), got {value!r}", value=value, source=key
    )


def _number(cast: Callable[[str], Any], name: str) -> Callable[[str, str], Any]:
    def read(text: str, variable: str) -> Any:
        try:
            return cast(text.strip())
        except ValueError:
            raise ConfigError(
                f"{variable} in the environment must be {name}, got {text!r}",
                value=text,
                source=variable,
            ) from None

    return read


def is_table(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) for k in value)


def _env_flag(text: str, variable: str) -> bool:
    """A flag's variable as a bool; empty is refused, not read as false.

    An empty variable (``AGENTKIT_WEB_FLAG_INJECTIONS=``) would otherwise turn off a check
    that is on by default.
    """
    if not text.strip():
        raise ConfigError(
            f"{variable} in the environment is empty; set it to 1 (true) or 0 (false), or "
            "unset it for the default",
            value=text,
            source=variable,
        )
    return env_bool(text, variable, "the environment")


BOOL = Kind("true or false", lambda v: isinstance(v, bool), _env_flag)
INT = Kind(
    "an integer",
    lambda v: isinstance(v, int) and not isinstance(v, bool),
    _number(int, "an integer"),
)
FLOAT = Kind(
    "a number",
    lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    _number(float, "a number"),
)
STR = Kind("a string", lambda v: isinstance(v, str), lambda t, var: t)
PLUGIN_NAMES = Kind(
    "a list of plugin names",
    lambda v: isinstance(v, list) and all(isinstance(x, str) and x for x in v),
)
NAMES = Kind(
    "a list of names",
    lambda v: isinstance(v, list) and all(isinstance(x, str) and x for x in v),
    lambda t, var: list(split_names(t)),
)
STRINGS = Kind(
    "a list of strings",
    lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    lambda t, var: list(split_names(t)),
)
#: ``Sequence[str]`` options: a file's list, or the tuple code may pass.
STRING_SEQUENCE = Kind(
    "a list of strings",
    lambda v: isinstance(v, list | tuple) and all(isinstance(x, str) for x in v),
    lambda t, var: list(split_names(t)),
)
#: A model: one model string, or a list of them (a fallback chain, tried in order).
MODELS = Kind(
    "a model string, or a list of them (a fallback chain)",
    lambda v: (
        isinstance(v, str)
        or (isinstance(v, list) and bool(v) and all(isinstance(x, str) and x for x in v))
    ),
    lambda t, var: t,
)
PATH = Kind("a path", lambda v: isinstance(v, str | os.PathLike), lambda t, var: t)
PATHS = Kind(
    "a list of paths",
    lambda v: isinstance(v, list | tuple) and all(isinstance(x, str | os.PathLike) for x in v),
    lambda t, var: list(split_names(t)),
)
TABLE = Kind("a table", is_table)
TABLES = Kind(
    "a table of tables (one per name)",
    lambda v: is_table(v) and all(is_table(x) for x in v.values()),
)


def kind_of(tp: object) -> Kind | None:
    """The kind of a ``TypedDict`` field's type, or None when no file or variable can hold it.

    An optional type (``int | None``) also takes None, as the code passing it may.
    """
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        rest = [a for a in args if a is not type(None)]
        kind = kind_of(rest[0]) if len(rest) == 1 else PATH if _paths(rest) else None
        if kind is None or len(rest) == len(args):
            return kind
        return Kind(f"{kind.name} or None", _or_none(kind.check), kind.from_env)
    simple: dict[object, Kind] = {bool: BOOL, int: INT, float: FLOAT, str: STR}
    if tp in simple:
        return simple[tp]
    if origin is list and args == (str,):
        return STRINGS
    if origin in (tuple, abc.Sequence, abc.Iterable) and args[:1] == (str,):
        return STRING_SEQUENCE
    if origin in (list, tuple, abc.Sequence, abc.Iterable) and args and kind_of(args[0]) is PATH:
        return PATHS
    if _paths([tp]):
        return PATH
    if tp is dict or origin in (dict, abc.Mapping):
        return TABLE
    return None


def _paths(types_: list[object]) -> bool:
    """Whether each of ``types_`` is ``str`` or a path type (``Path``, ``os.PathLike[str]``)."""
    bare = [typing.get_origin(t) or t for t in types_]
    return all(t is str or (isinstance(t, type) and issubclass(t, os.PathLike)) for t in bare) and (
        any(t is not str for t in bare)
    )


def _or_none(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


_SCHEMAS: dict[object, dict[str, Kind | None]] = {}


def settings_type(settings: type | Callable[[], type]) -> type:
    """The ``TypedDict`` a registration's ``settings=`` declares.

    Given as the class, or as a function of no arguments that returns it: then the class is
    made when the options are first read, not when the plugin loads (making a ``TypedDict``
    costs ~0.8 M instructions, and a first run loads every installed plugin).
    """
    return settings if isinstance(settings, type) else settings()


def settings_schema(settings: type | Callable[[], type]) -> dict[str, Kind | None]:
    """Each key of a settings ``TypedDict`` with its kind (None: settable in code only)."""
    schema = _SCHEMAS.get(settings)
    if schema is None:
        hints = _field_types(settings_type(settings))
        schema = _SCHEMAS[settings] = {k: kind_of(tp) for k, tp in hints.items()}
    return schema


class OnDemand:
    """A module imported when a name is first read from it.

    A hint written ``pathlib.Path`` against ``pathlib = OnDemand("pathlib")`` resolves to the
    real class when ``get_type_hints`` reads it, while loading the hint's module imports
    nothing (pathlib, with ``urllib.parse`` and ``ipaddress``: ~6 ms of a first run).
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> object:
        return getattr(importlib.import_module(self._name), attr)


class _HintNames(dict[str, object]):
    """Locals for a settings hint: a module's own names, then ``Path`` imported on demand.

    A plugin's entry module imports ``Path`` only for the type checker (a first run does not
    import pathlib), so its options' ``str | Path`` resolves here, when the settings are read.
    """

    def __init__(self, module: str) -> None:
        super().__init__()
        self._module = vars(sys.modules[module])

    def __missing__(self, name: str) -> object:
        if name != "Path" or name in self._module:
            raise KeyError(name)  # the module's globals and the builtins answer
        return _PATHLIB.Path


_PATHLIB = OnDemand("pathlib")


def _field_types(settings: type) -> dict[str, Any]:
    """The fields' types; one naming a type imported only for type checking is Any.

    A plugin's entry module stays light by importing the types of its code-only options
    (a model, a callable) under ``TYPE_CHECKING``; those fields hold whatever code passes.
    ``Path`` is the exception: a path option is set from files and variables too.
    """
    names = _HintNames(settings.__module__)
    try:
        return typing.get_type_hints(settings, localns=names)
    except NameError:
        pass
    found: dict[str, Any] = {}
    for key, tp in settings.__annotations__.items():
        one = type(settings.__name__, (), {"__annotations__": {key: tp}})
        one.__module__ = settings.__module__
        try:
            found[key] = typing.get_type_hints(one, localns=names)[key]
        except NameError:
            found[key] = Any
    return found


def sequence_of(item: type | tuple[type, ...], name: str) -> Kind:
    """The kind of a sequence (not a string) of ``item`` values, called ``name`` in messages."""
    return Kind(
        name,
        lambda v: (
            isinstance(v, Sequence)
            and not isinstance(v, str | bytes)
            and all(isinstance(x, item) for x in v)
        ),
    )


def check_kinds(
    given: Mapping[str, object], kinds: Mapping[str, Kind], owner: str, *, none: bool = True
) -> None:
    """Each value of ``given`` that ``kinds`` names is of its kind; None passes when ``none``.

    The error is :func:`wrong_kind`'s, naming ``owner(key=)`` (``"Kit(order=)"``).
    """
    for key, kind in kinds.items():
        value = given.get(key)
        if not (none and value is None) and not kind.check(value):
            raise wrong_kind(f"{owner}({key}=)", kind.name, value)


def wrong_kind(where: str, takes: str, value: object) -> ConfigError:
    """The error for ``value`` given as ``where`` (``"Kit(order=)"``), which takes ``takes``."""
    return ConfigError(
        f"{where} must be {takes}, got {value!r:.200} ({type(value).__name__})",
        value=value,
        source=where,
    )


def check_count(value: Any, where: str) -> int:
    """``value`` when it is an integer of at least 1 (a count: turns, parallel calls)."""
    if not INT.check(value) or value < 1:
        raise ConfigError(f"{where} must be at least 1, got {value!r}", value=value, source=where)
    return int(value)


def unknown_key(key: str, known: Iterable[str], where: str) -> ConfigError:
    """The error for a key nobody reads: names it, where it was, and the nearest valid key.

    ``known`` is the valid keys, or a schema, whose keys of kind None (code only) are
    suggested but not listed.
    """
    import difflib  # for a misspelt key's suggestion only

    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ";"
    listed = sorted(k for k in known if not isinstance(known, Mapping) or known[k] is not None)
    return ConfigError(
        f"unknown key {key!r} in {where}{hint} the keys there are {', '.join(listed) or 'none'}",
        value=key,
        source=where,
    )


def check_options(
    factory: Callable[..., object],
    options: Mapping[str, object],
    where: str,
    *,
    returned: bool = False,
) -> None:
    """Refuse an option ``factory(**options)`` would not take, naming it, ``where``, the nearest.

    Checked against the factory's signature, so a typo in a file's plugin options is a
    :class:`ConfigError` rather than the ``TypeError`` of the call. A factory that takes
    ``**options`` passes: it checks them itself; but with ``returned`` (once its call raised
    ``TypeError``) it answers for the class its return annotation names, as a lazy wrapper
    ``def make(**options) -> Guard: return Guard(**options)`` does. ``manager`` is the kit's
    to pass, never offered.
    """
    taken = taken_options(factory, returned=returned)
    unknown = [] if taken is None else [key for key in options if key not in taken]
    if unknown:
        raise unknown_key(unknown[0], taken or (), where)


def taken_options(factory: Callable[..., object], *, returned: bool = False) -> list[str] | None:
    """The option names ``factory`` takes; None when it takes any, or that cannot be told."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: the call will tell
        return None
    parameters = signature.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        made = signature.return_annotation if returned else None
        if isinstance(made, str) and made.isidentifier():  # postponed: the module knows it
            made = getattr(sys.modules.get(factory.__module__), made, None)
        return taken_options(made) if isinstance(made, type) else None
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in parameters if p.kind in kinds and p.name != "manager"]


def table_where(where: str, key: str) -> str:
    """How messages name the table ``key`` inside the one ``where`` names.

    ``"[kit] in /p/agentkit.toml"`` gives ``"[kit.KEY] in /p/agentkit.toml"``; a key that is
    not a bare TOML key is quoted, as the file has to write it.
    """
    bare = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)
    table, sep, path = where.partition("] in ")
    return f"{table}.{bare}] in {path}" if sep else f"{bare} in {where}"


def check_table(
    table: Mapping[str, Any],
    schema: Mapping[str, Kind | None],
    where: str,
    code_only: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """A file's ``table`` checked by :func:`check_given`: a key of kind None is refused there.

    ``code_only(key)`` says how to give such a key in code instead.
    """
    return check_given(table, schema, where, code_only=code_only or (lambda key: "pass it in code"))


def check_given(
    given: Mapping[str, Any],
    schema: Mapping[str, Kind | None],
    where: str,
    *,
    code_only: Callable[[str], str] | None = None,
    naming: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """``given`` with every key known to ``schema`` and every value of its kind.

    An unknown key is :func:`unknown_key`'s error. A key whose kind is None holds what the
    kinds cannot express (a callable, a model): given in code it is taken unchecked; with
    ``code_only`` (the values came from a file) it is refused, ``code_only(key)`` saying how.
    ``naming(key)`` is how a message names a key (default ``"KEY in WHERE"``).
    """
    name = naming or (lambda key: f"{key} in {where}")
    for key, value in given.items():
        if key not in schema:  # code may give every key, a file only those it can hold
            raise unknown_key(key, schema if code_only else list(schema), where)
        kind = schema[key]
        if kind is None:
            if code_only is None:
                continue
            raise ConfigError(
                f"{name(key)} cannot be set in a file: {code_only(key)}",
                value=value,
                source=where,
            )
        if not kind.check(value):
            raise ConfigError(
                f"{name(key)} must be {kind.name}, got {value!r} ({type(value).__name__})",
                value=value,
                source=where,
            )
    return dict(given)
