"""The pytest plugin agentkit-core installs (entry point ``pytest11``): asyncio for the suites.

The conformance suites in :mod:`agentkit_core.testing` are async tests and async fixtures
written for pytest-asyncio's *auto* mode. A plugin's own project should not have to copy this
repository's pytest configuration to run them, so when a project has chosen no mode (no
``asyncio_mode`` in its pytest configuration file, no ``-o asyncio_mode=``, no
``--asyncio-mode``), this plugin picks auto. When it also sets no
``asyncio_default_fixture_loop_scope``, pytest-asyncio's warning that the option is unset is
silenced: the suites' fixtures are function-scoped, so their loops are too either way. A
project that chose a mode keeps it. Without pytest-asyncio installed the plugin does nothing.

It also offers the ``pm`` fixture: a fresh :class:`~agentkit_core.PluginManager` per test, so a
test that registers a plugin or reads the installed ones never touches the process default.
"""

from __future__ import annotations

import warnings

import pytest

from .._plugins import PluginManager

#: The start of pytest-asyncio's warning about an unset fixture loop scope.
_LOOP_SCOPE_WARNING = 'The configuration option "asyncio_default_fixture_loop_scope" is unset'


def configured(config: pytest.Config, name: str) -> bool:
    """Whether the project sets the ini option ``name``, in its file or with ``-o``."""
    for item in config.getoption("override_ini", None) or ():
        if item.partition("=")[0].strip() == name:
            return True
    path = config.inipath
    if path is None:
        return False
    if path.suffix == ".toml":
        import tomllib

        data = tomllib.loads(path.read_text(encoding="utf-8"))
        pytest_table = data.get("tool", {}).get("pytest", {})
        tables = (pytest_table.get("ini_options", {}), pytest_table, data.get("pytest", {}))
        return any(isinstance(t, dict) and name in t for t in tables)
    import iniconfig

    ini = iniconfig.IniConfig(path)
    return any(name in ini[section] for section in ("pytest", "tool:pytest") if section in ini)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Pick auto mode (before pytest-asyncio configures itself) unless the project chose one."""
    if not config.pluginmanager.hasplugin("asyncio"):
        return
    if config.getoption("asyncio_mode", None) is None and not configured(config, "asyncio_mode"):
        config.option.asyncio_mode = "auto"
    if not configured(config, "asyncio_default_fixture_loop_scope"):
        warnings.filterwarnings(
            "ignore", message=_LOOP_SCOPE_WARNING, category=pytest.PytestDeprecationWarning
        )


@pytest.fixture
def pm() -> PluginManager:
    """A fresh plugin manager over the installed plugins, discovered on first use.

    Discovery waits for the first lookup, so plugins a test puts on ``sys.path`` before it are
    found. Pass it on (``Kit(manager=pm)``, ``get_guardrail(name, manager=pm)``).
    """
    return PluginManager()
