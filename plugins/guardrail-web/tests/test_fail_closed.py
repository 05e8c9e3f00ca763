"""Malformed web-guardrail settings fail closed: refused when the guardrail is built, from a file,
the environment or code, naming the value; never read as a weaker setting (a deadline of
``inf`` as no deadline, a limit of 0 found only at a tool's first fetch)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import agentkit_guardrail_web
import pytest
from agentkit_guardrail_web import SafeFetcher
from agentkit_guardrail_web import WebGuardrail
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import PluginConfig
from agentkit_core import PluginManager
from agentkit_core.plugin import get_guardrail
from agentkit_core.testing import ScriptedModel

LIMITS = "needs a positive deadline and max_body_bytes, got "


def manager(tmp_path: Path | None = None, config: str = "") -> PluginManager:
    """A manager with the web guardrail, on ``config`` written as the project's file if given."""
    file = PluginConfig()
    if tmp_path is not None:
        file = tmp_path / "agentkit.toml"
        file.write_text(config)
    return PluginManager(entry_points=False, plugins=[agentkit_guardrail_web], config=file)


# ---------------------------------------------------------------------- fetch limits


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("fetch_deadline = nan", "fetch_deadline=nan (a finite number of seconds)"),
        ("fetch_deadline = inf", "fetch_deadline=inf (a finite number of seconds)"),
        ("fetch_deadline = -inf", "fetch_deadline=-inf (a finite number of seconds)"),
        ("fetch_deadline = 0", "fetch_deadline=0 (a finite number of seconds)"),
        ("fetch_deadline = -1.5", "fetch_deadline=-1.5 (a finite number of seconds)"),
        ("max_body_bytes = 0", "max_body_bytes=0 (a whole number of bytes)"),
        ("max_body_bytes = -1", "max_body_bytes=-1 (a whole number of bytes)"),
    ],
)
def test_a_files_limit_that_is_no_limit_is_refused_when_the_guardrail_is_built(
    tmp_path: Path, line: str, shown: str
) -> None:
    pm = manager(tmp_path, f"[guardrail.web]\n{line}\n")
    with pytest.raises(ConfigError) as err:
        get_guardrail("web", manager=pm, environ={})
    where = f"[guardrail.web] in {tmp_path / 'agentkit.toml'}"
    key = line.split()[0]
    assert str(err.value) == f"WebGuardrail(...) {LIMITS}{shown} ({key} was set in {where})"
    assert err.value.source == where
    with pytest.raises(ConfigError, match=re.escape(shown)):
        Agent("reader", model=ScriptedModel(["ok"]), manager=pm)  # before any run


@pytest.mark.parametrize(
    ("variable", "text", "shown"),
    [
        ("AGENTKIT_WEB_FETCH_DEADLINE", "nan", "fetch_deadline=nan"),
        ("AGENTKIT_WEB_FETCH_DEADLINE", "inf", "fetch_deadline=inf"),
        ("AGENTKIT_WEB_FETCH_DEADLINE", "1e999", "fetch_deadline=inf"),
        ("AGENTKIT_WEB_FETCH_DEADLINE", "0", "fetch_deadline=0.0"),
        ("AGENTKIT_WEB_MAX_BODY_BYTES", "0", "max_body_bytes=0"),
        ("AGENTKIT_WEB_MAX_BODY_BYTES", "-10", "max_body_bytes=-10"),
    ],
)
def test_a_variables_limit_that_is_no_limit_is_refused(
    variable: str, text: str, shown: str
) -> None:
    with pytest.raises(ConfigError) as err:
        get_guardrail("web", manager=manager(), environ={variable: text})
    assert str(err.value).startswith(f"WebGuardrail(...) {LIMITS}{shown} ")
    assert str(err.value).endswith(f" was set in {variable})") and err.value.source == variable


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        ({"fetch_deadline": math.inf}, "fetch_deadline=inf"),
        ({"fetch_deadline": math.nan}, "fetch_deadline=nan"),
        ({"fetch_deadline": True}, "fetch_deadline=True"),
        ({"max_body_bytes": 0}, "max_body_bytes=0"),
        ({"max_body_bytes": 1.5}, "max_body_bytes=1.5"),
        ({"max_body_bytes": True}, "max_body_bytes=True"),
    ],
)
def test_limits_in_code_are_checked_as_the_files_are(options: dict[str, Any], shown: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(shown)):
        WebGuardrail(**options)
    # through a kit: the settings' types (a bool is no number) or the guardrail's own check
    with pytest.raises(ConfigError) as err:
        Kit(
            model=ScriptedModel(["ok"]),
            guardrail="web",
            guardrail_options=options,
            manager=manager(),
        )
    ((key, value),) = options.items()
    assert key in str(err.value) and repr(value) in str(err.value)


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        ({"deadline": math.inf}, "deadline=inf"),
        ({"deadline": None}, "deadline=None"),
        ({"max_body_bytes": None}, "max_body_bytes=None"),
        ({"max_body_bytes": 0}, "max_body_bytes=0"),
    ],
)
def test_the_fetcher_takes_no_missing_or_endless_limit(options: dict[str, Any], shown: str) -> None:
    with pytest.raises(ConfigError, match=rf"^SafeFetcher\(\.\.\.\) {LIMITS}{re.escape(shown)} "):
        SafeFetcher(WebGuardrail(), **options)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(), st.integers(min_value=-(10**6), max_value=10**6)))
def test_a_deadline_is_a_positive_finite_number_or_refused(value: float) -> None:
    try:
        guard = WebGuardrail(fetch_deadline=value)
    except ConfigError as err:
        assert not (math.isfinite(value) and value > 0)
        assert f"fetch_deadline={value!r} " in str(err)
        return
    assert math.isfinite(value) and value > 0
    assert guard.fetch_options == {"deadline": value}


@settings(max_examples=200, deadline=None)
@given(st.integers())
def test_a_body_limit_is_a_positive_integer_or_refused(value: int) -> None:
    try:
        guard = WebGuardrail(max_body_bytes=value)
    except ConfigError as err:
        assert value < 1 and f"max_body_bytes={value!r} " in str(err)
        return
    assert value >= 1 and guard.fetch_options == {"max_body_bytes": value}


# ---------------------------------------------------------------------- where a value was set


@pytest.mark.parametrize(
    ("key", "file_value", "variable_text", "refused"),
    [
        ("egress_allow", '["example.com", "*.example.org"]', "example.com,*.example.org", "*"),
        ("egress_allow", '["exa\u200dmple.com"]', "exa\u200dmple.com", "Joiner"),
        ("allow_private_networks", '["10.0.0.1/8"]', "10.0.0.1/8", "has host bits set"),
    ],
)
def test_a_value_the_guardrail_refuses_names_the_file_or_the_variable_it_came_from(
    tmp_path: Path, key: str, file_value: str, variable_text: str, refused: str
) -> None:
    pm = manager(tmp_path, f"[guardrail.web]\n{key} = {file_value}\n")
    where = f"[guardrail.web] in {tmp_path / 'agentkit.toml'}"
    with pytest.raises(ConfigError, match=re.escape(refused)) as err:
        get_guardrail("web", manager=pm, environ={})
    assert str(err.value).endswith(f" ({key} was set in {where})") and err.value.source == where
    variable = f"AGENTKIT_WEB_{key.upper()}"
    with pytest.raises(ConfigError, match=re.escape(refused)) as err:
        get_guardrail("web", manager=manager(), environ={variable: variable_text})
    assert str(err.value).endswith(f" ({key} was set in {variable})")
    assert err.value.source == variable
    # given in code, the error is the guardrail's own, naming the option it was given as
    with pytest.raises(ConfigError, match=re.escape(refused)) as err:
        get_guardrail("web", manager=pm, environ={}, **{key: variable_text.split(",")})
    assert "was set in" not in str(err.value)
    assert err.value.source == f"WebGuardrail({key}=...)"


# ---------------------------------------------------------------------- flags from the environment

FLAGS = {
    "AGENTKIT_WEB_RESOLVE": "resolve",
    "AGENTKIT_WEB_REDACT_TOOL_OUTPUT": "redact_tool_output",
    "AGENTKIT_WEB_FLAG_INJECTIONS": "flag_injections",
}
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def test_an_empty_flag_variable_is_refused_before_any_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # AGENTKIT_WEB_FLAG_INJECTIONS= (set, empty) was read as false: the warning line off,
    # while the flag is on by default.
    monkeypatch.setenv("AGENTKIT_WEB_FLAG_INJECTIONS", "")
    with pytest.raises(ConfigError, match=r"^AGENTKIT_WEB_FLAG_INJECTIONS in the environment is "):
        Agent("reader", model=ScriptedModel(["ok"]), manager=manager())
    monkeypatch.setenv("AGENTKIT_WEB_FLAG_INJECTIONS", "0")  # said plainly, it is taken
    agent = Agent("reader", model=ScriptedModel(["ok"]), manager=manager())
    assert isinstance(agent.guardrail, WebGuardrail) and agent.guardrail.flag_injections is False


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(FLAGS)), st.text(max_size=8))
def test_a_flag_variable_is_a_plain_true_or_false_or_refused(variable: str, text: str) -> None:
    try:
        guard = get_guardrail("web", manager=manager(), environ={variable: text})
    except ConfigError as err:
        assert err.source == variable and err.value == text
        assert text.strip().lower() not in TRUE + FALSE
        return
    word = text.strip().lower()
    assert word in TRUE + FALSE  # never the empty text, never an unknown word
    assert getattr(guard, FLAGS[variable]) is (word in TRUE)


_WEB_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["false", "0", "", "example.com"]),
    st.lists(
        st.sampled_from(["example.com", "", "*.x.org", "10.0.0.0/8", "ｅｘａｍｐｌｅ.com", "a b"]),
        max_size=3,
    ),
)
_WEB_KEYS = st.sampled_from(
    [
        "egress_allow",
        "resolve",
        "redact_tool_output",
        "allow_private_networks",
        "flag_injections",
        "fetch_deadline",
        "max_body_bytes",
        "egress_alow",
        "Resolve",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_WEB_KEYS, _WEB_VALUES, max_size=4))
def test_kit_options_build_the_guardrail_they_say_or_are_refused(options: dict[str, Any]) -> None:
    """Through the kit, options are refused, or the guardrail holds exactly what was given."""
    try:
        kit = Kit(
            model=ScriptedModel(["ok"]),
            guardrail="web",
            guardrail_options=options,
            manager=manager(),
        )
    except ConfigError:
        return
    guard = kit.config().guardrail
    assert isinstance(guard, WebGuardrail)
    assert set(options) <= set(WebGuardrail.__init__.__kwdefaults__ or {}) | {
        "egress_allow",
        "redact_tool_output",
    }
    for key in ("resolve", "redact_tool_output", "flag_injections"):
        if key in options:
            assert getattr(guard, key) is options[key]
    if "egress_allow" in options:
        assert guard.egress_allow is not None and len(guard.egress_allow) <= len(
            options["egress_allow"]
        )
        assert bool(guard.egress_allow) is bool(options["egress_allow"])
    deadline = options.get("fetch_deadline")
    if deadline is not None:
        assert math.isfinite(deadline) and deadline > 0
    body = options.get("max_body_bytes")
    assert body is None or body >= 1


@pytest.mark.parametrize(
    "variable",
    ["agentkit_web_egress_allow", "Agentkit_Web_Egress_Allow", "AGENTKIT_WEB_egress_allow"],
)
def test_a_variable_named_in_another_case_is_refused_not_ignored(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    # the allow list in a lower-case variable was never read: every public host was allowed
    monkeypatch.setenv(variable, "example.com")
    message = (
        f"{variable} in the environment: variable names are case-sensitive, so it would not be "
        "read; name it AGENTKIT_WEB_EGRESS_ALLOW"
    )
    with pytest.raises(ConfigError) as err:
        Agent("reader", model=ScriptedModel(["ok"]), manager=manager())
    assert (str(err.value), err.value.source) == (message, variable)
    with pytest.raises(ConfigError, match=re.escape(message)):
        get_guardrail("web", manager=manager(), environ={variable: "example.com"})
    monkeypatch.delenv(variable)
    monkeypatch.setenv("AGENTKIT_WEB_EGRESS_ALLOW", "example.com")
    guard = Agent("reader", model=ScriptedModel(["ok"]), manager=manager()).guardrail
    assert isinstance(guard, WebGuardrail) and guard.egress_allow == {"example.com"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        # get_guardrail's own environ=: the environment's allow list was dropped, any host allowed
        ({"environ": {}}, r"^guardrail_options names 'environ', which is not a setting of the "),
        ({"name": "web"}, r"^guardrail_options names 'name', which is not a setting of the "),
        ([("resolve", True)], r"^guardrail_options takes a table of the plugin's options"),
        ("resolve", r"^guardrail_options takes a table of the plugin's options, .*got 'resolve'"),
    ],
)
def test_guardrail_options_that_are_no_settings_are_refused(
    monkeypatch: pytest.MonkeyPatch, extra: Any, message: str
) -> None:
    monkeypatch.setenv("AGENTKIT_WEB_EGRESS_ALLOW", "example.com")
    with pytest.raises(ConfigError, match=message):
        Kit(
            model=ScriptedModel(["ok"]),
            guardrail="web",
            guardrail_options=extra,
            manager=manager(),
        )
    kit = Kit(model=ScriptedModel(["ok"]), guardrail="web", manager=manager())
    guard = kit.config().guardrail
    assert isinstance(guard, WebGuardrail) and guard.egress_allow == {"example.com"}
