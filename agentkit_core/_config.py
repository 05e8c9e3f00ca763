"""The configuration: one strict reader for ``agentkit.toml`` and ``[tool.agentkit]``, and the env.

The project's file is the nearest ``agentkit.toml`` or ``pyproject.toml`` found from the working
directory upward (``agentkit.toml`` wins in one directory), or the file ``AGENTKIT_CONFIG`` names.
In ``agentkit.toml`` the keys sit at the top level; in ``pyproject.toml`` under
``[tool.agentkit]``::

    load, disable, order, plugins_dir, pick, strict    which plugins load, and their order
    [kit]                                              the options of Kit.from_file
    [guardrail.NAME]                                   the settings of the guardrail NAME
    [models.PREFIX]                                    the options of the models PREFIX:NAME

Every key is known: an unknown one, anywhere, is a :class:`ConfigError` naming the key, the file
and the nearest valid key, and a value of the wrong type names the type expected. Environment
variables replace the file's values key by key (``AGENTKIT_LOAD_PLUGINS``..., and each
guardrail's declared prefix such as ``AGENTKIT_WEB_``); values given in code replace both.
"""

from __future__ import annotations

import difflib
import inspect
import json
import os
import re
import sys
import types
import typing
from collections import abc
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from ._errors import ConfigError
from ._hookfields import FIELDS

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


# ---------------------------------------------------------------------- kinds of values


@dataclass(frozen=True, slots=True)
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


def _bool(value: Any, key: str, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ConfigError(
        f"{key} in {where} must be true or false (1/0), got {value!r}", value=value, source=where
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


def _is_table(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) for k in value)


BOOL = Kind(
    "true or false", lambda v: isinstance(v, bool), lambda t, var: _bool(t, var, "the environment")
)
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
TABLE = Kind("a table", _is_table)
TABLES = Kind(
    "a table of tables (one per name)",
    lambda v: _is_table(v) and all(_is_table(x) for x in v.values()),
)


def kind_of(tp: Any) -> Kind | None:
    """The kind of a ``TypedDict`` field's type, or None when no file or variable can hold it."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        rest = [a for a in args if a is not type(None)]
        return kind_of(rest[0]) if len(rest) == 1 else None
    simple: dict[Any, Kind] = {bool: BOOL, int: INT, float: FLOAT, str: STR}
    if tp in simple:
        return simple[tp]
    if origin in (list, tuple, abc.Sequence, abc.Iterable) and args[:1] == (str,):
        return STRINGS
    if tp is dict or origin in (dict, abc.Mapping):
        return TABLE
    return None


_SCHEMAS: dict[type, dict[str, Kind | None]] = {}


def settings_schema(settings: type) -> dict[str, Kind | None]:
    """Each key of a settings ``TypedDict`` with its kind (None: settable in code only)."""
    schema = _SCHEMAS.get(settings)
    if schema is None:
        hints = typing.get_type_hints(settings)
        schema = _SCHEMAS[settings] = {key: kind_of(tp) for key, tp in hints.items()}
    return schema


def check_count(value: Any, where: str) -> int:
    """``value`` when it is an integer of at least 1 (a count: turns, parallel calls)."""
    if not INT.check(value) or value < 1:
        raise ConfigError(f"{where} must be at least 1, got {value!r}", value=value, source=where)
    return int(value)


def unknown_key(key: str, known: Any, where: str) -> ConfigError:
    """The error for a key nobody reads: names it, where it was, and the nearest valid key.

    ``known`` is the valid keys, or a schema, whose keys of kind None (code only) are
    suggested but not listed.
    """
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ";"
    listed = sorted(k for k in known if not isinstance(known, Mapping) or known[k] is not None)
    return ConfigError(
        f"unknown key {key!r} in {where}{hint} the keys there are {', '.join(listed) or 'none'}",
        value=key,
        source=where,
    )


def check_options(
    factory: Callable[..., Any], options: Mapping[str, Any], where: str, *, returned: bool = False
) -> None:
    """Refuse an option ``factory(**options)`` would not take, naming it, ``where``, the nearest.

    Checked against the factory's signature, so a typo in a file's plugin options is a
    :class:`ConfigError` rather than the ``TypeError`` of the call. A factory that takes
    ``**options`` passes: it checks them itself; but with ``returned`` (once its call raised
    ``TypeError``) it answers for the class its return annotation names, as a lazy wrapper
    ``def make(**options) -> Guard: return Guard(**options)`` does. ``manager`` is the kit's
    to pass, never offered.
    """
    taken = _taken_options(factory, returned)
    unknown = [] if taken is None else [key for key in options if key not in taken]
    if unknown:
        raise unknown_key(unknown[0], taken, where)


def _taken_options(factory: Callable[..., Any], returned: bool) -> list[str] | None:
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
        return _taken_options(made, False) if isinstance(made, type) else None
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
    """``table`` with every key known to ``schema`` and every value of its kind.

    A key whose kind is None can only be given in code; ``code_only(key)`` says how.
    """
    for key, value in table.items():
        if key not in schema:
            raise unknown_key(key, schema, where)
        kind = schema[key]
        if kind is None:
            how = code_only(key) if code_only else "pass it in code"
            raise ConfigError(
                f"{key} in {where} cannot be set in a file: {how}", value=value, source=where
            )
        if not kind.check(value):
            raise ConfigError(
                f"{key} in {where} must be {kind.name}, got {value!r} ({type(value).__name__})",
                value=value,
                source=where,
            )
    return dict(table)


# ---------------------------------------------------------------------- the file


#: The top-level keys and their kinds; ``kit`` and ``guardrail`` are read further below.
PLUGIN_KEYS: dict[str, Kind | None] = {
    "load": PLUGIN_NAMES,
    "disable": PLUGIN_NAMES,
    "order": PLUGIN_NAMES,
    "plugins_dir": Kind("a directory path", lambda v: isinstance(v, str) and bool(v)),
    "pick": Kind(
        'a table that maps "seam.name" to a plugin name, e.g. {"compactors.truncation" = "mine"}',
        lambda v: _is_table(v) and all("." in k and isinstance(x, str) for k, x in v.items()),
    ),
    "strict": Kind("true or false (1/0)", lambda v: isinstance(v, bool)),
    "kit": TABLE,
    "guardrail": TABLES,
    "models": TABLES,
}

#: The Kit options a file may set, with their kinds.
KIT_FILE_KEYS: dict[str, Kind | None] = {
    "name": STR,
    "description": STR,
    "model": STR,
    "instructions": STR,
    "parts": TABLES,
    "order": NAMES,
    "instruction_budget": INT,
    "memory": TABLE,
    "tool_sources": TABLES,
    "mcp": STRINGS,
    "compaction": TABLE,
    "compactor": STR,
    "compactor_options": TABLE,
    "guardrail": STR,
    "guards": NAMES,
    "guard_options": TABLES,
    "guard_fail_open": NAMES,
    "executor": STR,
    "executor_options": TABLE,
    "policy": STR,
    "policy_engine": STR,
    "max_turns": INT,
    "max_parallel_tools": INT,
    "settings": TABLE,
    "session": STR,
    "header": TABLE,
    "session_id": STR,
    "resume": STR,
    "fork": STR,
    "fork_at": STR,
}

#: The Kit options that take Python objects, so only code can give them.
KIT_CODE_KEYS: tuple[str, ...] = (
    "tools",
    "agents",
    "tool_filter",
    "tool_wrap",
    "on_tool_conflict",
    "guardrail_options",
    "middlewares",
    "manager",
    "verdict_observer",
    *FIELDS,
)

#: Every Kit option.
KIT_OPTIONS: tuple[str, ...] = (*KIT_FILE_KEYS, *KIT_CODE_KEYS)
_KIT_SCHEMA: dict[str, Kind | None] = {**KIT_FILE_KEYS, **dict.fromkeys(KIT_CODE_KEYS)}


def _kit_code_only(key: str) -> str:
    if key == "guardrail_options":
        return (
            "a guardrail's settings live in its own table, [guardrail.NAME] (for the web "
            "guardrail, [guardrail.web]), read wherever that guardrail is built"
        )
    return f"it takes Python objects; pass it in code, Kit.from_file(path, {key}=...)"


@dataclass(frozen=True, slots=True)
class PluginConfig:
    """The user's plugin configuration; ``sources`` says where each key came from.

    ``load`` is an allow-list (``None``: every installed plugin; empty: none), ``disable`` a
    deny-list, both of entry-point or distribution names. ``order`` lists plugin names that go
    first, in that order, overriding priorities and their mutual before/after declarations.
    ``plugins_dir`` holds loose ``.py`` plugins. ``pick`` settles a name two plugins register on
    one seam: ``{"compactors.truncation": "plugin-or-distribution"}``. ``guardrail`` holds the
    file's ``[guardrail.NAME]`` tables (checked against the guardrail's settings when it is
    built); its sources are ``"guardrail.NAME"``. ``models`` holds the ``[models.PREFIX]``
    tables: the options every model string ``"PREFIX:name"`` is built with (checked against the
    model plugin's declared settings); their sources are ``"models.PREFIX"``.
    ``sources["file"]`` names the file read.
    """

    load: tuple[str, ...] | None = None
    disable: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    plugins_dir: Path | None = None
    pick: Mapping[str, str] = field(default_factory=dict)
    strict: bool | None = None
    guardrail: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)

    def source_of(self, key: str) -> str:
        """Where ``key`` was set, for messages (``AGENTKIT_LOAD_PLUGINS``, a file's table...)."""
        return self.sources.get(key, "the default")

    def file_hint(self) -> str:
        """Where a key the user should add belongs: the file read, or where one would go."""
        return self.sources.get("file") or "agentkit.toml (or [tool.agentkit] in pyproject.toml)"


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """One configuration file, read and checked whole."""

    path: Path
    plugins: PluginConfig
    #: The ``[kit]`` table, or None when the file has none.
    kit: dict[str, Any] | None
    #: How messages name the ``[kit]`` table: ``"[kit] in /path/agentkit.toml"``.
    kit_where: str


def find_config_file(start: Path | None = None) -> Path | None:
    """The nearest ``agentkit.toml`` or ``pyproject.toml`` from ``start`` (the cwd) upward."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name in ("agentkit.toml", "pyproject.toml"):
            candidate = directory / name
            if candidate.is_file():
                return candidate
    return None


def read_toml(path: Path) -> dict[str, Any]:
    """Parse one TOML file; a broken one is a ConfigError naming it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib  # type: ignore[import-not-found]
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
        return data
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", value=str(path), source=str(path)) from exc


def read_config(path: str | os.PathLike[str]) -> ConfigFile:
    """Read and check a whole configuration file (every table, every key, every type)."""
    p = Path(path)
    data = read_toml(p)
    if p.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("agentkit", {}) if isinstance(tool, dict) else {}
        prefix, where = "tool.agentkit.", f"[tool.agentkit] in {p}"
    else:
        table, prefix, where = data, "", str(p)
    if not _is_table(table):
        raise ConfigError(f"{where} must be a table, got {table!r}", value=table, source=where)
    check_table(table, PLUGIN_KEYS, where)
    kwargs: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in ("load", "disable", "order"):
        if key in table:
            kwargs[key] = tuple(table[key])
    if "plugins_dir" in table:
        kwargs["plugins_dir"] = (p.parent / table["plugins_dir"]).resolve()
    if "pick" in table:
        kwargs["pick"] = dict(table["pick"])
    if "strict" in table:
        kwargs["strict"] = table["strict"]
    sources.update((key, where) for key in kwargs)
    sources["file"] = where
    guardrails = table.get("guardrail", {})
    for name in guardrails:
        sources[f"guardrail.{name}"] = f"[{prefix}guardrail.{name}] in {p}"
    models = table.get("models", {})
    for name in models:
        sources[f"models.{name}"] = f"[{prefix}models.{name}] in {p}"
    kit_where = f"[{prefix}kit] in {p}"
    kit = table.get("kit")
    if kit is not None:
        kit = check_table(kit, _KIT_SCHEMA, kit_where, _kit_code_only)
        if "settings" in kit:  # the request settings' own keys and ranges, named by the file
            from ._settings import check_settings

            kit["settings"] = check_settings(kit["settings"], f"settings in {kit_where}")
    plugins = PluginConfig(
        **kwargs, guardrail=dict(guardrails), models=dict(models), sources=sources
    )
    return ConfigFile(p, plugins, kit, kit_where)


def read_plugin_config(path: str | os.PathLike[str]) -> PluginConfig:
    """The plugin keys of one file (``load``, ``disable``, ``order``, ``plugins_dir``, ...)."""
    return read_config(path).plugins


def read_kit_options(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The kit options in a TOML file: ``[kit]``, or ``[tool.agentkit.kit]`` in pyproject.

    The whole file is checked as :func:`read_config` checks it.
    """
    config = read_config(path)
    if config.kit is None:
        table = config.kit_where.partition(" in ")[0]
        raise ConfigError(f"{config.path} has no {table} table of kit options", source=str(path))
    return config.kit


def load_plugin_config(
    environ: Mapping[str, str] | None = None, start: Path | None = None
) -> PluginConfig:
    """The project's file (if any), with the ``AGENTKIT_*`` environment variables on top."""
    env = os.environ if environ is None else environ
    explicit = env.get("AGENTKIT_CONFIG")
    path: Path | None = None
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(
                f"AGENTKIT_CONFIG names {explicit!r}, which is not a file",
                value=explicit,
                source="AGENTKIT_CONFIG",
            )
    else:
        path = find_config_file(start)
    base = read_plugin_config(path) if path is not None else PluginConfig()
    kwargs: dict[str, Any] = {
        "load": base.load,
        "disable": base.disable,
        "order": base.order,
        "plugins_dir": base.plugins_dir,
        "pick": base.pick,
        "strict": base.strict,
        "guardrail": base.guardrail,
        "models": base.models,
    }
    sources = dict(base.sources)
    if "AGENTKIT_LOAD_PLUGINS" in env:
        kwargs["load"] = split_names(env["AGENTKIT_LOAD_PLUGINS"])
        sources["load"] = "AGENTKIT_LOAD_PLUGINS"
    if "AGENTKIT_DISABLE_PLUGINS" in env:
        kwargs["disable"] = split_names(env["AGENTKIT_DISABLE_PLUGINS"])
        sources["disable"] = "AGENTKIT_DISABLE_PLUGINS"
    strict = strict_from_env(env)
    if strict is not None:
        kwargs["strict"] = strict
        sources["strict"] = "AGENTKIT_STRICT_PLUGINS"
    return PluginConfig(**kwargs, sources=sources)


def strict_from_env(environ: Mapping[str, str] | None = None) -> bool | None:
    """``AGENTKIT_STRICT_PLUGINS`` as a bool, or None when it is unset or empty."""
    env = os.environ if environ is None else environ
    name = "AGENTKIT_STRICT_PLUGINS"
    if not env.get(name, "").strip():
        return None
    return _bool(env[name], name, "the environment")


# ---------------------------------------------------------------------- a plugin's settings


def layered_settings(
    explicit: Mapping[str, Any],
    *,
    settings: type | None,
    env_prefix: str,
    file_table: Mapping[str, Any] | None,
    file_where: str,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A plugin's options: its file table, then its environment variables, then ``explicit``.

    Key by key, a later layer replaces an earlier one. ``settings`` (a ``TypedDict``) declares
    the keys and their types, and the environment variable of a key is ``env_prefix`` plus the
    key in upper case (``AGENTKIT_WEB_EGRESS_ALLOW``). The file table and the variables are
    checked against it: an unknown key or variable under the prefix, or a value of the wrong
    type, is a :class:`ConfigError` naming the file or the variable. Without ``settings`` the
    file table is taken as it is and the environment is not read.
    """
    merged: dict[str, Any] = {}
    if settings is None:
        merged.update(file_table or {})
        merged.update(explicit)
        return merged
    schema = settings_schema(settings)
    if file_table:
        merged.update(check_table(file_table, schema, file_where))
    if env_prefix:
        env = os.environ if environ is None else environ
        variables = {env_prefix + key.upper(): key for key in schema}
        for variable in env:  # the names only: os.environ decodes a value when it is read
            if not variable.startswith(env_prefix):
                continue
            text = env[variable]
            key = variables.get(variable)
            if key is None:
                raise unknown_key(variable, variables, "the environment")
            kind = schema[key]
            if kind is None or kind.from_env is None:
                raise ConfigError(
                    f"{variable} in the environment: {key} cannot be set by a variable; pass "
                    "it in code",
                    value=text,
                    source=variable,
                )
            merged[key] = kind.from_env(text, variable)
    merged.update(explicit)
    return merged
