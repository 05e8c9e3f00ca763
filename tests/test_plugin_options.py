"""Each plugin's options are a TypedDict (``settings=``), checked when the lookup builds it.

A misspelt key is the nearest-key error naming where the options were given, the plugin and
the key; a value of the wrong kind names the kind; no option dict, however odd, reaches the
factory to fail there with a ``TypeError``.
"""

from __future__ import annotations

import string
import types
from pathlib import Path
from typing import Any

import agentkit_compactor_importance
import agentkit_compactor_sliding_window
import agentkit_compactor_summarization
import agentkit_compactor_truncation
import agentkit_executor_dbos
import agentkit_guard_denylist
import agentkit_guard_limits
import agentkit_guard_redact
import agentkit_guardrail_web
import agentkit_instructions_agentsmd
import agentkit_instructions_skills
import agentkit_mcp_client
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import PluginManager
from agentkit_core import hookimpl
from agentkit_core._lookup import build
from agentkit_core._tables import check_given
from agentkit_core._tables import settings_schema
from agentkit_core._tables import settings_type
from agentkit_core.plugin import get_guardrail
from agentkit_core.testing._registrations import check_declared_options

PLUGINS = (
    agentkit_compactor_importance,
    agentkit_compactor_sliding_window,
    agentkit_compactor_summarization,
    agentkit_compactor_truncation,
    agentkit_executor_dbos,
    agentkit_guard_denylist,
    agentkit_guard_limits,
    agentkit_guard_redact,
    agentkit_guardrail_web,
    agentkit_instructions_agentsmd,
    agentkit_instructions_skills,
    agentkit_mcp_client,
)


def manager() -> PluginManager:
    return PluginManager(entry_points=False, plugins=PLUGINS)


PM = manager()
#: Every registration that declares its options, as (seam, name).
DECLARED = [
    (seam, reg.name)
    for seam in ("compactors", "executors", "guardrails", "guards", "instruction_parts")
    for reg in PM.registrations(seam)
    if "settings" in reg.meta
] + [("tool_sources", "mcp")]


def test_every_plugin_factory_with_options_declares_them() -> None:
    assert sorted(DECLARED) == [
        ("compactors", "importance"),
        ("compactors", "sliding-window"),
        ("compactors", "summarization"),
        ("compactors", "truncation"),
        ("executors", "dbos"),
        ("guardrails", "web"),
        ("guards", "denylist"),
        ("guards", "max-input"),
        ("guards", "max-output"),
        ("guards", "redact"),
        ("instruction_parts", "agentsmd"),
        ("instruction_parts", "skills"),
        ("tool_sources", "mcp"),
    ]
    for seam, name in DECLARED:
        settings = settings_type(PM.lookup(seam, name).meta["settings"])
        module = next(p for p in PLUGINS if settings.__module__.startswith(p.__name__))
        assert settings.__name__ in module.__all__, f"{module.__name__} exports {settings}"
        assert getattr(module, settings.__name__) is settings


@pytest.mark.parametrize("module", PLUGINS, ids=lambda m: m.__name__)
def test_the_declared_keys_are_the_factorys(module: Any) -> None:
    check_declared_options(type("Made", (), {"__module__": f"{module.__name__}._x"})())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"guards": ["redact"], "guard_options": {"redact": {"knids": ["email"]}}},
            r"unknown key 'knids' in guard_options\['redact'\] \(guard 'redact' from plugin "
            r"'.*redact.*'\); did you mean 'kinds'\?",
        ),
        (
            {"guards": ["max-input"], "guard_options": {"max-input": {"max_tokns": 5}}},
            r"unknown key 'max_tokns' in guard_options\['max-input'\] \(guard 'max-input' from "
            r"plugin '.*limits.*'\); did you mean 'max_tokens'\?",
        ),
        (
            {"compactor": "truncation", "compactor_options": {"max_tokns": 5}},
            r"unknown key 'max_tokns' in compactor_options \(compactor 'truncation' from plugin "
            r"'.*truncation.*'\); did you mean 'max_tokens'\?",
        ),
        (
            {"compactor": "sliding-window", "compactor_options": {"keep_recnt": 5}},
            r"unknown key 'keep_recnt'.*did you mean 'keep_recent'\?",
        ),
        (
            {"parts": {"agentsmd": {"max_file_byte": 10}}},
            r"unknown key 'max_file_byte' in parts\['agentsmd'\] \(instruction part 'agentsmd' "
            r"from plugin '.*agentsmd.*'\); did you mean 'max_file_bytes'\?",
        ),
        (
            {"parts": {"skills": {"offer_tools": False}}},
            r"unknown key 'offer_tools' in parts\['skills'\].*did you mean 'offer_tool'\?",
        ),
    ],
)
def test_a_misspelt_option_through_the_kit_names_the_plugin_and_the_nearest_key(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Kit(model="test", manager=manager(), **options)


async def test_a_misspelt_tool_source_option_names_the_plugin_and_the_nearest_key() -> None:
    with pytest.raises(
        ConfigError,
        match=r"unknown key 'conect_timeout' in tool_sources\['mcp'\] \(tool source 'mcp' from "
        r"plugin '.*mcp.*'\); did you mean 'connect_timeout'\?",
    ):
        await Kit.open(model="test", manager=manager(), tool_sources={"mcp": {"conect_timeout": 1}})


def test_a_misspelt_guardrail_option_in_code_names_the_plugin_and_the_nearest_key() -> None:
    with pytest.raises(ConfigError, match=r"'egress_alow'.*guardrail 'web'.*'egress_allow'"):
        get_guardrail("web", manager=manager(), environ={}, egress_alow=["example.com"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"guards": ["redact"], "guard_options": {"redact": {"cache": "big"}}},
            r"guard_options\['redact'\]\['cache'\] \(guard 'redact' from plugin '.*'\) must be an "
            r"integer, got 'big' \(str\)",
        ),
        (
            {"guards": ["denylist"], "guard_options": {"denylist": {"terms": "spam"}}},
            r"guard_options\['denylist'\]\['terms'\] .* must be a list of strings, got 'spam'",
        ),
        (
            {"compactor": "summarization", "compactor_options": {"keep_recent": "5"}},
            r"compactor_options\['keep_recent'\] .* must be an integer or None, got '5'",
        ),
        (
            {"parts": {"agentsmd": {"root": 5}}},
            r"parts\['agentsmd'\]\['root'\] .* must be a path or None, got 5 \(int\)",
        ),
        (
            {"executor": "dbos", "executor_options": {"step_timeout": "5"}},
            r"executor_options\['step_timeout'\] \(executor 'dbos' from plugin '.*'\) must be a "
            r"number or None, got '5'",
        ),
    ],
)
def test_a_value_of_the_wrong_kind_names_the_kind(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Kit(model="test", manager=manager(), **options)


def test_code_only_keys_take_what_code_passes() -> None:
    schema = settings_schema(agentkit_compactor_truncation.TruncationOptions)
    assert schema["estimate"] is None
    estimate = len  # a callable: no kind can say it, so code passes it unchecked
    assert check_given({"estimate": estimate}, schema, "here") == {"estimate": estimate}
    Kit(
        model="test",
        manager=manager(),
        compactor="truncation",
        compactor_options={"max_tokens": 100, "estimate": lambda ms: 1},
    )
    Kit(  # a tuple where the factory takes a sequence, a Path where it takes a path
        model="test",
        manager=manager(),
        guards=["denylist", "redact"],
        guard_options={"denylist": {"terms": ("spam",)}, "redact": {"kinds": ("email",)}},
        parts={"agentsmd": {"path": Path.cwd(), "root": Path.cwd()}},
    )


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@st.composite
def _options(draw: st.DrawFn, seam: str, name: str) -> dict[str, Any]:
    """Keys of the schema a file can hold, and random ones; values of random JSON types.

    Keys of kind None (a callable, a model object) hold what code passes, unchecked: code
    passing the wrong object there is the code's bug, as with any keyword argument.
    """
    schema = settings_schema(PM.lookup(seam, name).meta["settings"])
    keys = st.sampled_from(sorted(k for k, kind in schema.items() if kind is not None))
    other = st.text(string.ascii_lowercase + "_", min_size=1, max_size=12)
    return draw(st.dictionaries(keys | other, _json, max_size=4))


def _built_or_refused(seam: str, name: str, options: dict[str, Any], where: Path) -> None:
    """``build`` makes the object or raises ConfigError; anything else fails the test."""
    if seam == "executors":  # the executor stays on its own database file
        options.setdefault("database", f"sqlite:///{where}/r.sqlite")
    try:
        made = build(seam, name, options, PM, where="the drawn options")
    except ConfigError:
        return
    close = getattr(made, "aclose", None)
    if close is not None and seam == "tool_sources":
        import asyncio

        asyncio.run(close())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize(("seam", "name"), DECLARED)
def test_random_options_build_or_raise_config_error(
    seam: str, name: str, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _built_or_refused(seam, name, data.draw(_options(seam, name)), tmp_path_factory.mktemp("db"))


TEXT_OPTIONS = [
    (seam, name, key)
    for seam, name in DECLARED
    for key, kind in settings_schema(PM.lookup(seam, name).meta["settings"]).items()
    if kind is not None
]


@pytest.mark.parametrize(("seam", "name", "key"), TEXT_OPTIONS)
def test_each_option_given_an_unnamable_text_is_built_or_refused(
    seam: str, name: str, key: str, tmp_path: Path
) -> None:
    """Every option alone, each text no file can be named, as itself and in a list."""
    for text in ("\x00", "a\x00b", "\ud800", "x" * 5000):
        for value in (text, [text]):
            _built_or_refused(seam, name, {key: value}, tmp_path)


def _both_forms(made: list[int]) -> PluginManager:
    """Truncation registered twice: ``settings=`` the class, and a function returning it."""
    options = agentkit_compactor_truncation.TruncationOptions

    def later() -> type:
        made.append(1)
        return options

    plugin = types.ModuleType("both_forms")

    @hookimpl
    def agentkit_register_compactors(register: Any) -> None:
        register("eager", agentkit_compactor_truncation.TruncationCompactor, settings=options)
        register("later", agentkit_compactor_truncation.TruncationCompactor, settings=later)

    plugin.agentkit_register_compactors = agentkit_register_compactors  # type: ignore[attr-defined]
    return PluginManager(entry_points=False, plugins=[plugin]).load()


def test_settings_given_as_a_function_is_called_when_the_options_are_first_read() -> None:
    made: list[int] = []
    pm = _both_forms(made)
    assert made == []  # loading the plugin made no class
    build("compactors", "later", {"max_tokens": 10}, pm)
    build("compactors", "later", {"max_tokens": 20}, pm)
    assert made == [1]  # read once, then the schema is kept


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_settings_given_as_a_function_checks_as_the_class_does(data: st.DataObject) -> None:
    pm = _both_forms([])
    options = data.draw(_options("compactors", "truncation"))
    outcomes = []
    for name in ("eager", "later"):
        try:
            made = build("compactors", name, options, pm, where="the drawn options")
        except ConfigError as exc:
            outcomes.append(str(exc).replace(repr(name), "NAME"))
        else:
            outcomes.append(repr(vars(made)))
    assert outcomes[0] == outcomes[1]
