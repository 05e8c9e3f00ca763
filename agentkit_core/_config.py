"""The user's plugin configuration: ``[tool.agentkit]`` in the project's file, then the environment.

The project's file is the nearest ``agentkit.toml`` or ``pyproject.toml`` found from the working
directory upward (``agentkit.toml`` wins in one directory), or the file ``AGENTKIT_CONFIG`` names.
In ``agentkit.toml`` the keys sit at the top level; in ``pyproject.toml`` under ``[tool.agentkit]``.
An environment variable replaces the matching key of the file. Other keys (``kit``...) belong to
other parts of agentkit and are left alone here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from ._errors import ConfigError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


@dataclass(frozen=True, slots=True)
class PluginConfig:
    """Which plugins to load and how to order them; ``sources`` says where each key came from.

    ``load`` is an allow-list (``None``: every installed plugin; empty: none), ``disable`` a
    deny-list, both of entry-point or distribution names. ``order`` lists plugin names that go
    first, in that order, overriding priorities and their mutual before/after declarations.
    ``plugins_dir`` holds loose ``.py`` plugins. ``pick`` settles a name two plugins register on
    one seam: ``{"compactors.truncation": "plugin-or-distribution"}``.
    """

    load: tuple[str, ...] | None = None
    disable: tuple[str, ...] = ()
    order: tuple[str, ...] = ()
    plugins_dir: Path | None = None
    pick: Mapping[str, str] = field(default_factory=dict)
    strict: bool | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    def source_of(self, key: str) -> str:
        """Where ``key`` was set, for messages (``AGENTKIT_LOAD_PLUGINS``, a file's table...)."""
        return self.sources.get(key, "the default")


def split_names(value: str) -> tuple[str, ...]:
    """Names from an environment value: comma-, semicolon- or space-separated."""
    return tuple(n for n in value.replace(";", ",").replace(" ", ",").split(",") if n)


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


def _table_of(path: Path) -> tuple[dict[str, Any], str]:
    data = read_toml(path)
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("agentkit", {})
        where = f"[tool.agentkit] in {path}"
    else:
        table, where = data, str(path)
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table, got {table!r}", value=table, source=where)
    return table, where


def _names(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(
            f"{key} in {where} must be a list of plugin names, got {value!r}",
            value=value,
            source=where,
        )
    return tuple(value)


def _bool(value: Any, key: str, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ConfigError(
        f"{key} in {where} must be true or false (1/0), got {value!r}", value=value, source=where
    )


def read_plugin_config(path: str | os.PathLike[str]) -> PluginConfig:
    """The plugin keys of one file (``load``, ``disable``, ``order``, ``plugins_dir``, ``pick``)."""
    p = Path(path)
    table, where = _table_of(p)
    kwargs: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in ("load", "disable", "order"):
        if key in table:
            kwargs[key] = _names(table[key], key, where)
            sources[key] = where
    if "plugins_dir" in table:
        value = table["plugins_dir"]
        if not isinstance(value, str) or not value:
            raise ConfigError(
                f"plugins_dir in {where} must be a directory path, got {value!r}",
                value=value,
                source=where,
            )
        kwargs["plugins_dir"] = (p.parent / value).resolve()
        sources["plugins_dir"] = where
    if "pick" in table:
        pick = table["pick"]
        if not isinstance(pick, dict) or not all(
            isinstance(k, str) and "." in k and isinstance(v, str) for k, v in pick.items()
        ):
            raise ConfigError(
                f'pick in {where} must map "seam.name" to a plugin name, e.g. '
                f'{{"compactors.truncation" = "my-plugin"}}; got {pick!r}',
                value=pick,
                source=where,
            )
        kwargs["pick"] = dict(pick)
        sources["pick"] = where
    if "strict" in table:
        kwargs["strict"] = _bool(table["strict"], "strict", where)
        sources["strict"] = where
    return PluginConfig(**kwargs, sources=sources)


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
