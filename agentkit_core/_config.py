"""The configuration: one strict reader for ``agentkit.toml`` and ``[tool.agentkit]``, and the env.

The project's file is the nearest ``agentkit.toml`` or ``pyproject.toml`` found from the working
directory upward (``agentkit.toml`` wins in one directory), or the file ``AGENTKIT_CONFIG`` names.
In ``agentkit.toml`` the keys sit at the top level; in ``pyproject.toml`` under
``[tool.agentkit]``::

    load, disable, order, plugins_dir, pick, strict    which plugins load, and their order
    [kit]                                              the options of Kit.from_file
    [guardrail.NAME]                                   the settings of the guardrail NAME
    [models.PREFIX]                                    the options of the models PREFIX:NAME
    [prices."PREFIX:NAME"]                             a model's price (overrides any plugin's)

Every key is known: an unknown one, anywhere, is a :class:`ConfigError` naming the key, the file
and the nearest valid key, and a value of the wrong type names the type expected. Environment
variables replace the file's values key by key (``AGENTKIT_LOAD_PLUGINS``..., and each
guardrail's declared prefix such as ``AGENTKIT_WEB_``); values given in code replace both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any

from ._errors import ConfigError
from ._hookfields import FIELDS
from ._records import record
from ._tables import INT
from ._tables import MODELS
from ._tables import NAMES
from ._tables import PLUGIN_NAMES
from ._tables import STR
from ._tables import STRINGS
from ._tables import TABLE
from ._tables import TABLES
from ._tables import Kind
from ._tables import OnDemand
from ._tables import check_table
from ._tables import env_bool
from ._tables import is_table
from ._tables import settings_schema
from ._tables import split_names
from ._tables import unknown_key

if TYPE_CHECKING:
    import pathlib
else:  # imported when a path is made or a hint read: a first run reads its file by name
    pathlib = OnDemand("pathlib")

# ---------------------------------------------------------------------- the file


#: The top-level keys and their kinds; ``kit`` and ``guardrail`` are read further below.
PLUGIN_KEYS: dict[str, Kind | None] = {
    "load": PLUGIN_NAMES,
    "disable": PLUGIN_NAMES,
    "order": PLUGIN_NAMES,
    "plugins_dir": Kind("a directory path", lambda v: isinstance(v, str) and bool(v)),
    "pick": Kind(
        'a table that maps "seam.name" to a plugin name, e.g. {"compactors.truncation" = "mine"}',
        lambda v: is_table(v) and all("." in k and isinstance(x, str) for k, x in v.items()),
    ),
    "strict": Kind("true or false (1/0)", lambda v: isinstance(v, bool)),
    "kit": TABLE,
    "guardrail": TABLES,
    "models": TABLES,
    "prices": TABLES,
}

#: The Kit options a file may set, with their kinds.
KIT_FILE_KEYS: dict[str, Kind | None] = {
    "name": STR,
    "description": STR,
    "model": MODELS,
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
    "handoffs",
    "tool_filter",
    "tool_wrap",
    "deferred_tools",
    "message_filter",
    "on_tool_conflict",
    "guardrail_options",
    "middlewares",
    "manager",
    "verdict_observer",
    "limits",
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


@record(frozen=True, slots=True)
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
    model plugin's declared settings); their sources are ``"models.PREFIX"``. ``prices`` holds
    the ``[prices."PREFIX:NAME"]`` tables: a model's price in US dollars per million tokens
    (``input``, ``output``, ``cache_read``, ``cache_write``, ``reasoning``), which wins over a
    price-source plugin's (a private deployment's own price); their source is ``"prices"``.
    ``sources["file"]`` names the file read.
    """

    load: tuple[str, ...] | None = None
    disable: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    plugins_dir: pathlib.Path | None = None
    pick: Mapping[str, str] = field(default_factory=dict)
    strict: bool | None = None
    guardrail: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    models: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    prices: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)

    def source_of(self, key: str) -> str:
        """Where ``key`` was set, for messages (``AGENTKIT_LOAD_PLUGINS``, a file's table...)."""
        return self.sources.get(key, "the default")

    def file_hint(self) -> str:
        """Where a key the user should add belongs: the file read, or where one would go."""
        return self.sources.get("file") or "agentkit.toml (or [tool.agentkit] in pyproject.toml)"


#: A file's ``[kit]`` table, or None when it has none.
KitTable = dict[str, Any] | None


@record(frozen=True, slots=True)
class ConfigFile:
    """One configuration file, read and checked whole."""

    path: pathlib.Path
    plugins: PluginConfig
    #: The ``[kit]`` table, or None when the file has none.
    kit: KitTable
    #: How messages name the ``[kit]`` table: ``"[kit] in /path/agentkit.toml"``.
    kit_where: str


def find_config_file(start: pathlib.Path | None = None) -> pathlib.Path | None:
    """The nearest ``agentkit.toml`` or ``pyproject.toml`` from ``start`` (the cwd) upward."""
    found = _find_config(os.fspath(start) if start else os.getcwd())
    return None if found is None else pathlib.Path(found)


def _find_config(start: str) -> str | None:
    """:func:`find_config_file` by name (``os.path``: a first run does not import pathlib)."""
    directory = os.path.realpath(start)
    while True:
        for name in ("agentkit.toml", "pyproject.toml"):
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


#: Where a ``pyproject.toml`` can start ``[tool.agentkit]``: a ``[tool]`` or ``[tool.agentkit...]``
#: header, or a top-level key ``tool`` (``tool.agentkit.load = ...``, ``tool = {...}``), each
#: name bare or quoted; or a ``\u`` escape, which may spell either name in a quoted key.
_MAY_HOLD_OURS = re.compile(
    r"""^\ufeff?[ \t]*(?:\[\[?[ \t]*(["']?)tool\1[ \t]*"""
    r"""(?:\]|\.[ \t]*(["']?)agentkit\2[ \t]*[.\]])|(["']?)tool\3[ \t]*[.=])|\\[uU]""",
    re.MULTILINE,
)


def read_toml(
    path: str | os.PathLike[str], *, parse_if: re.Pattern[str] | None = None
) -> dict[str, Any]:
    """Parse one TOML file; a broken one is a ConfigError naming it.

    With ``parse_if``, a file whose text it does not match is not parsed (read as empty).
    """
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise _unreadable(path, exc) from exc
    if parse_if is not None and not parse_if.search(text):
        return {}
    import tomllib

    try:
        data: dict[str, Any] = tomllib.loads(text)
        return data
    except tomllib.TOMLDecodeError as exc:
        raise _unreadable(path, exc) from exc


def _unreadable(path: str | os.PathLike[str], exc: Exception) -> ConfigError:
    return ConfigError(f"cannot read {path}: {exc}", value=str(path), source=str(path))


def read_config(path: str | os.PathLike[str]) -> ConfigFile:
    """Read and check a whole configuration file (every table, every key, every type)."""
    p = pathlib.Path(path)
    return ConfigFile(p, *_read_config(str(p)))


def _read_config(p: str) -> tuple[PluginConfig, KitTable, str]:
    """:func:`read_config` by name (a normalised path): the plugin keys, ``[kit]`` and its place."""
    pyproject = os.path.basename(p) == "pyproject.toml"
    # A pyproject that cannot hold [tool.agentkit] is other tools' file: not parsed (tomllib
    # with its datetime, ~5 ms of a first run run from such a project), so not checked either.
    data = read_toml(p, parse_if=_MAY_HOLD_OURS if pyproject else None)
    if pyproject:
        tool = data.get("tool", {})
        table = tool.get("agentkit", {}) if isinstance(tool, dict) else {}
        prefix, where = "tool.agentkit.", f"[tool.agentkit] in {p}"
    else:
        table, prefix, where = data, "", str(p)
    if not is_table(table):
        raise ConfigError(f"{where} must be a table, got {table!r}", value=table, source=where)
    check_table(table, PLUGIN_KEYS, where)
    kwargs: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in ("load", "disable", "order"):
        if key in table:
            kwargs[key] = tuple(table[key])
    if "plugins_dir" in table:
        kwargs["plugins_dir"] = pathlib.Path(os.path.dirname(p), table["plugins_dir"]).resolve()
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
    if "prices" in table:
        sources["prices"] = f"[{prefix}prices] in {p}"
    kit_where = f"[{prefix}kit] in {p}"
    kit = table.get("kit")
    if kit is not None:
        kit = check_table(kit, _KIT_SCHEMA, kit_where, _kit_code_only)
        if "settings" in kit:  # the request settings' own keys and ranges, named by the file
            from ._settings import check_settings  # imports the model types: not for a listing

            kit["settings"] = check_settings(kit["settings"], f"settings in {kit_where}")
    plugins = PluginConfig(
        **kwargs,
        guardrail=dict(guardrails),
        models=dict(models),
        prices=dict(table.get("prices", {})),
        sources=sources,
    )
    return plugins, kit, kit_where


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
    environ: Mapping[str, str] | None = None, start: pathlib.Path | None = None
) -> PluginConfig:
    """The project's file (if any), with the ``AGENTKIT_*`` environment variables on top."""
    env = os.environ if environ is None else environ
    explicit = env.get("AGENTKIT_CONFIG")
    path: str | None = None
    if explicit:
        path = str(pathlib.Path(explicit))  # named in messages as read_config names it
        if not os.path.isfile(path):
            raise ConfigError(
                f"AGENTKIT_CONFIG names {explicit!r}, which is not a file",
                value=explicit,
                source="AGENTKIT_CONFIG",
            )
    else:
        path = _find_config(os.fspath(start) if start else os.getcwd())
    base = _read_config(path)[0] if path is not None else PluginConfig()
    kwargs: dict[str, Any] = {
        "load": base.load,
        "disable": base.disable,
        "order": base.order,
        "plugins_dir": base.plugins_dir,
        "pick": base.pick,
        "strict": base.strict,
        "guardrail": base.guardrail,
        "models": base.models,
        "prices": base.prices,
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
    return env_bool(env[name], name, "the environment")


# ---------------------------------------------------------------------- a plugin's settings


def layered_settings(
    explicit: Mapping[str, object],
    *,
    settings: type | None,
    env_prefix: str,
    file_table: Mapping[str, object] | None,
    file_where: str,
    environ: Mapping[str, str] | None = None,
    origins: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A plugin's options: its file table, then its environment variables, then ``explicit``.

    Key by key, a later layer replaces an earlier one. ``settings`` (a ``TypedDict``) declares
    the keys and their types, and the environment variable of a key is ``env_prefix`` plus the
    key in upper case (``AGENTKIT_WEB_EGRESS_ALLOW``). The file table and the variables are
    checked against it: an unknown key or variable under the prefix, or a value of the wrong
    type, is a :class:`ConfigError` naming the file or the variable. Without ``settings`` the
    file table is taken as it is and the environment is not read. ``origins``, when given, gets
    where each key not given in ``explicit`` came from (``file_where`` or the variable).
    """
    given = {} if origins is None else origins
    merged: dict[str, Any] = {}
    if settings is None:
        merged.update(file_table or {})
        given.update(dict.fromkeys(file_table or {}, file_where))
        merged.update(explicit)
        for name in explicit:
            given.pop(name, None)
        return merged
    schema = settings_schema(settings)
    if file_table:
        merged.update(check_table(file_table, schema, file_where))
        given.update(dict.fromkeys(file_table, file_where))
    if env_prefix:
        env = os.environ if environ is None else environ
        variables = {env_prefix + key.upper(): key for key in schema}
        for variable in env:  # the names only: os.environ decodes a value when it is read
            if not variable.upper().startswith(env_prefix):
                continue
            text = env[variable]
            key = variables.get(variable)
            if key is None and variable.upper() in variables:  # agentkit_web_resolve=1
                raise ConfigError(
                    f"{variable} in the environment: variable names are case-sensitive, so it "
                    f"would not be read; name it {variable.upper()}",
                    value=text,
                    source=variable,
                )
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
            given[key] = variable
    merged.update(explicit)
    for name in explicit:
        given.pop(name, None)
    return merged
