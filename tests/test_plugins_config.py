"""Reading [tool.agentkit] / agentkit.toml and the AGENTKIT_* environment variables."""

from __future__ import annotations

import pytest

from agentkit_core import ConfigError
from agentkit_core import PluginConfig
from agentkit_core._config import find_config_file
from agentkit_core._config import load_plugin_config
from agentkit_core._config import split_names


def test_nearest_file_upward_and_agentkit_toml_wins_in_one_directory(tmp_path):
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[tool.agentkit]\nload = ['x']\n")
    assert find_config_file(deep) == tmp_path / "pyproject.toml"
    (tmp_path / "agentkit.toml").write_text("load = ['y']\n")
    assert find_config_file(deep) == tmp_path / "agentkit.toml"
    assert load_plugin_config({}, start=deep).load == ("y",)


def test_keys_and_their_sources(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.agentkit]\n"
        "disable = ['d']\n"
        "order = ['b', 'a']\n"
        "plugins_dir = 'plug'\n"
        "pick = {'models.openai' = 'mine'}\n"
        "strict = true\n"
        "[tool.agentkit.kit]\nunrelated = 1\n"
    )
    cfg = load_plugin_config({}, start=tmp_path)
    assert cfg == PluginConfig(
        disable=("d",),
        order=("b", "a"),
        plugins_dir=tmp_path / "plug",
        pick={"models.openai": "mine"},
        strict=True,
        sources=cfg.sources,
    )
    assert cfg.load is None
    assert cfg.source_of("order") == f"[tool.agentkit] in {tmp_path / 'pyproject.toml'}"
    assert cfg.source_of("load") == "the default"


def test_environment_replaces_the_file(tmp_path):
    (tmp_path / "agentkit.toml").write_text("load = ['a']\ndisable = ['b']\nstrict = true\n")
    env = {
        "AGENTKIT_LOAD_PLUGINS": "",
        "AGENTKIT_DISABLE_PLUGINS": "x; y z",
        "AGENTKIT_STRICT_PLUGINS": "0",
    }
    cfg = load_plugin_config(env, start=tmp_path)
    assert (cfg.load, cfg.disable, cfg.strict) == ((), ("x", "y", "z"), False)
    assert cfg.source_of("disable") == "AGENTKIT_DISABLE_PLUGINS"


def test_agentkit_config_names_the_file(tmp_path):
    other = tmp_path / "elsewhere.toml"
    other.write_text("order = ['z']\n")
    assert load_plugin_config({"AGENTKIT_CONFIG": str(other)}, start=tmp_path).order == ("z",)
    with pytest.raises(
        ConfigError, match=r"AGENTKIT_CONFIG names '.*missing.toml', which is not a file"
    ):
        load_plugin_config({"AGENTKIT_CONFIG": str(tmp_path / "missing.toml")})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("order = 'a'", r"order in .* must be a list of plugin names, got 'a'"),
        ("disable = ['']", r"disable in .* must be a list of plugin names"),
        ("plugins_dir = 3", r"plugins_dir in .* must be a directory path, got 3"),
        ("pick = {'nodot' = 'a'}", r'pick in .* must map "seam.name" to a plugin name'),
        ("strict = 'perhaps'", r"strict in .* must be true or false"),
        ("load = [", r"cannot read .*agentkit.toml"),
    ],
)
def test_bad_values_name_the_key_and_the_file(tmp_path, text, message):
    (tmp_path / "agentkit.toml").write_text(text + "\n")
    with pytest.raises(ConfigError, match=message):
        load_plugin_config({}, start=tmp_path)


def test_bad_strict_environment_value(tmp_path):
    with pytest.raises(
        ConfigError, match=r"AGENTKIT_STRICT_PLUGINS in the environment must be true"
    ):
        load_plugin_config({"AGENTKIT_STRICT_PLUGINS": "sometimes"}, start=tmp_path)


def test_split_names():
    assert split_names(" a, b;c  d ,,") == ("a", "b", "c", "d")
    assert split_names("") == ()
