"""Reading [tool.agentkit] / agentkit.toml and the AGENTKIT_* environment variables."""

from __future__ import annotations

import json
import re
from typing import TypedDict

import pytest
from hypothesis import HealthCheck
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import PluginConfig
from agentkit_core._config import KIT_CODE_KEYS
from agentkit_core._config import KIT_FILE_KEYS
from agentkit_core._config import find_config_file
from agentkit_core._config import layered_settings
from agentkit_core._config import load_plugin_config
from agentkit_core._config import read_config
from agentkit_core._tables import settings_schema
from agentkit_core._tables import split_names
from agentkit_core.plugin import read_kit_options


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
        "[tool.agentkit.kit]\nmax_turns = 3\n"
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
        ("pick = {'nodot' = 'a'}", r'pick in .* must be a table that maps "seam.name" to a plugin'),
        ("strict = 'perhaps'", r"strict in .* must be true or false"),
        ("load = [", r"cannot read .*agentkit.toml"),
    ],
)
def test_bad_values_name_the_key_and_the_file(tmp_path, text, message):
    (tmp_path / "agentkit.toml").write_text(text + "\n")
    with pytest.raises(ConfigError, match=message):
        load_plugin_config({}, start=tmp_path)


def test_a_pyproject_that_cannot_hold_our_table_is_not_parsed(tmp_path):
    """Other tools' file: a syntax error in it is theirs to report (and tomllib not imported)."""
    path = tmp_path / "pyproject.toml"
    path.write_text("[project]\nname = 'x'\n[tool.ruff]\nline-length = [\n")
    where = f"[tool.agentkit] in {path}"
    assert load_plugin_config({}, start=tmp_path) == PluginConfig(sources={"file": where})
    path.write_text("[project]\nname = 'x'\n[tool.agentkit]\nload = [\n")
    with pytest.raises(ConfigError, match=r"cannot read .*pyproject.toml"):
        load_plugin_config({}, start=tmp_path)


#: Lines a pyproject may hold: our table spelled every way TOML allows, and look-alikes.
PYPROJECT_LINES = (
    "[tool.agentkit]",
    " [ \"tool\" . 'agentkit' ]",
    "\t[tool.agentkit.kit]",
    "[[tool.agentkit.parts]]",
    "[tool]",
    "['tool']",
    "agentkit.load = []",
    "'agentkit' = {load = []}",
    "tool.agentkit.load = []",
    "tool = {agentkit = {load = []}}",
    '"tool"."agentkit".strict = true',
    '[tool."\\u0061gentkit"]',
    '["\\u0074ool".agentkit]',
    "[tool.ruff]",
    "[tool.agentkit-extra]",
    "[project]",
    "[project.scripts]",
    'agentkit = "agentkit_core.cli:main"',
    "name = 'agentkit'",
    "tools = 1",
    "# [tool.agentkit]",
)


@given(st.lists(st.sampled_from(PYPROJECT_LINES), max_size=6))
def test_every_pyproject_holding_our_table_is_parsed(lines):
    import tomllib

    from agentkit_core._config import _MAY_HOLD_OURS

    text = "\n".join(lines) + "\n"
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return
    if isinstance(tool, dict) and "agentkit" in tool:
        assert _MAY_HOLD_OURS.search(text)


def test_bad_strict_environment_value(tmp_path):
    with pytest.raises(
        ConfigError, match=r"AGENTKIT_STRICT_PLUGINS in the environment must be true"
    ):
        load_plugin_config({"AGENTKIT_STRICT_PLUGINS": "sometimes"}, start=tmp_path)


class _Flags(TypedDict, total=False):
    check: bool


@pytest.mark.parametrize("text", ["", " ", "\t"])
def test_an_empty_flag_variable_is_refused_not_read_as_false(text):
    # an empty AGENTKIT_WEB_FLAG_INJECTIONS= would have turned off a check that is on by default
    with pytest.raises(ConfigError) as err:
        layered_settings(
            {},
            settings=_Flags,
            env_prefix="AGENTKIT_T_",
            file_table=None,
            file_where="",
            environ={"AGENTKIT_T_CHECK": text},
        )
    assert str(err.value) == (
        "AGENTKIT_T_CHECK in the environment is empty; set it to 1 (true) or 0 (false), or "
        "unset it for the default"
    )
    assert (err.value.source, err.value.value) == ("AGENTKIT_T_CHECK", text)
    for written, read in (("0", False), (" off ", False), ("1", True), ("Yes", True)):
        environ = {"AGENTKIT_T_CHECK": written}
        flags = layered_settings(
            {},
            settings=_Flags,
            env_prefix="AGENTKIT_T_",
            file_table=None,
            file_where="",
            environ=environ,
        )
        assert flags == {"check": read}


def test_split_names():
    assert split_names(" a, b;c  d ,,") == ("a", "b", "c", "d")
    assert split_names("") == ()


# ---------------------------------------------------------------------- strictness


def _write(tmp_path, kind: str, body: str):
    """``body`` as agentkit.toml keys, or under [tool.agentkit] in a pyproject.toml."""
    if kind == "agentkit.toml":
        path = tmp_path / "agentkit.toml"
        path.write_text(body)
        return path, str(path)
    path = tmp_path / "pyproject.toml"
    for table in ("kit", "guardrail"):
        body = body.replace(f"[{table}", f"[tool.agentkit.{table}")
    path.write_text("[project]\nname = 'x'\n[tool.agentkit]\n" + body)
    return path, f"[tool.agentkit] in {path}"


@pytest.mark.parametrize("kind", ["agentkit.toml", "pyproject.toml"])
def test_a_misspelled_top_level_key_names_the_key_the_file_and_the_nearest_key(tmp_path, kind):
    _, where = _write(tmp_path, kind, "disabel = ['web']\n")
    with pytest.raises(ConfigError) as caught:
        load_plugin_config({}, start=tmp_path)
    message = str(caught.value)
    assert f"unknown key 'disabel' in {where}; did you mean 'disable'?" in message
    assert caught.value.value == "disabel" and caught.value.source == where


@pytest.mark.parametrize("kind", ["agentkit.toml", "pyproject.toml"])
def test_a_misspelled_kit_key_is_named_with_its_table(tmp_path, kind):
    path, _ = _write(tmp_path, kind, "[kit]\ninstructionz = 'Be brief.'\n")
    table = "[kit]" if kind == "agentkit.toml" else "[tool.agentkit.kit]"
    with pytest.raises(
        ConfigError,
        match=rf"unknown key 'instructionz' in {re.escape(table)} in {re.escape(str(path))}; "
        r"did you mean 'instructions'\?",
    ):
        read_kit_options(path)
    with pytest.raises(ConfigError, match="instructionz"):  # the plugin manager reads it whole
        load_plugin_config({}, start=tmp_path)


def test_a_bad_type_names_the_expected_type(tmp_path):
    path, _ = _write(tmp_path, "agentkit.toml", "[kit]\nmax_turns = 'ten'\n")
    with pytest.raises(
        ConfigError, match=r"max_turns in \[kit\] in .* must be an integer, got 'ten' \(str\)"
    ):
        read_kit_options(path)
    path.write_text("[kit]\nmax_turns = true\n")  # TOML booleans are not integers
    with pytest.raises(ConfigError, match=r"must be an integer, got True \(bool\)"):
        read_kit_options(path)
    path.write_text("guardrail = 'web'\n")  # the guardrail table is a table of tables
    with pytest.raises(ConfigError, match=r"guardrail in .* must be a table of tables"):
        load_plugin_config({}, start=tmp_path)


def test_kit_keys_that_take_python_objects_say_to_pass_them_in_code(tmp_path):
    path, _ = _write(tmp_path, "agentkit.toml", "[kit]\ntools = ['lookup']\n")
    with pytest.raises(ConfigError, match=r"tools in \[kit\] .* cannot be set in a file.*tools="):
        read_kit_options(path)
    path.write_text("[kit]\nguardrail = 'web'\n[kit.guardrail_options]\negress_allow = []\n")
    with pytest.raises(ConfigError, match=r"guardrail_options .*\[guardrail.web\]"):
        read_kit_options(path)


def test_the_error_names_the_file_agentkit_config_points_at(tmp_path):
    (tmp_path / "agentkit.toml").write_text("load = []\n")  # fine, and not the one read
    other = tmp_path / "conf" / "team.toml"
    other.parent.mkdir()
    other.write_text("oder = ['a']\n")
    with pytest.raises(ConfigError, match=rf"'oder' in {re.escape(str(other))}; did you mean"):
        load_plugin_config({"AGENTKIT_CONFIG": str(other)}, start=tmp_path)


def test_guardrail_tables_are_kept_with_where_they_came_from(tmp_path):
    path, _ = _write(
        tmp_path, "pyproject.toml", "[guardrail.web]\negress_allow = ['example.com']\n"
    )
    cfg = load_plugin_config({}, start=tmp_path)
    assert cfg.guardrail == {"web": {"egress_allow": ["example.com"]}}
    assert cfg.source_of("guardrail.web") == f"[tool.agentkit.guardrail.web] in {path}"


def test_other_tools_tables_in_pyproject_are_not_ours(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 99\n[tool.agentkit]\n")
    where = f"[tool.agentkit] in {tmp_path / 'pyproject.toml'}"
    assert load_plugin_config({}, start=tmp_path) == PluginConfig(sources={"file": where})


KNOWN_TOP = ("load", "disable", "order", "plugins_dir", "pick", "strict", "kit", "guardrail")
KNOWN_KIT = tuple(KIT_FILE_KEYS)
bare_keys = st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True)


@given(key=bare_keys, nested=st.booleans())
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_unknown_key_is_refused_naming_it_and_the_file(tmp_path, key, nested):
    known = KNOWN_KIT if nested else KNOWN_TOP
    assume(key not in known and key not in KIT_CODE_KEYS)
    path = tmp_path / "agentkit.toml"
    path.write_text(("[kit]\n" if nested else "") + f"{key} = 1\n")
    with pytest.raises(ConfigError) as caught:
        read_config(path)
    assert f"unknown key {key!r} in " in str(caught.value)
    assert str(path) in str(caught.value)


toml_values = st.one_of(
    st.booleans(),
    st.integers(-5, 5),
    st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=5),
    st.lists(st.integers(0, 3), max_size=2),
)


@given(key=st.sampled_from(KNOWN_KIT), value=toml_values)
@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_kit_value_of_the_wrong_type_names_its_type(tmp_path, key, value):
    kind = KIT_FILE_KEYS[key]
    assert kind is not None
    path = tmp_path / "agentkit.toml"
    path.write_text(tomli_w_line(key, value))
    if kind.check(value):
        assert read_kit_options(path) == {key: value}
    else:
        with pytest.raises(ConfigError, match=re.escape(f"{key} in [kit] in {path} must be ")):
            read_kit_options(path)


def tomli_w_line(key: str, value: object) -> str:
    """``[kit]`` with one key, written as TOML (json's spelling of these values is TOML's)."""
    return f"[kit]\n{key} = {json.dumps(value, ensure_ascii=False)}\n"


def test_a_path_option_keeps_its_kind_when_its_module_imports_path_for_the_type_checker() -> None:
    """instructions-agentsmd imports ``Path`` for the type checker (no pathlib on a first run)."""
    from agentkit_instructions_agentsmd import AgentsMDOptions

    kinds = {key: kind and kind.name for key, kind in settings_schema(AgentsMDOptions).items()}
    assert kinds["path"] == "a path"
    assert kinds["root"] == "a path or None"
    assert kinds["extra"] == "a list of paths"


def test_find_config_file_by_name_matches_the_path_walk(tmp_path, monkeypatch) -> None:
    """The lookup goes by ``os.path`` (a first run does not import pathlib), from the cwd too."""
    (tmp_path / "pyproject.toml").write_text("[tool.agentkit]\nload = []\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_config_file() == tmp_path.resolve() / "pyproject.toml"
    assert find_config_file(deep.relative_to(deep)) == tmp_path.resolve() / "pyproject.toml"
