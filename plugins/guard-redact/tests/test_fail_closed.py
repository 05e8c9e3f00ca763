"""Malformed redaction options fail closed: refused where they are given, naming the value; never
read as a weaker setting (a table of fail-open guards read as its keys, a look-alike kind taken
as no kind, a string of kinds as its letters)."""

from __future__ import annotations

from typing import Any

import agentkit_guard_redact
import pytest
from agentkit_guard_redact import RedactGuard
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import PluginManager
from agentkit_core.plugin import PII_DETECTORS
from agentkit_core.plugin import GuardInput
from agentkit_core.testing import ScriptedModel

EMAIL = "jane.doe@example.org"


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_guard_redact, name="redact")
    return pm


def kit(**options: Any) -> Kit:
    return Kit(model=ScriptedModel(["ok"]), manager=manager(), **options)


@pytest.mark.parametrize(
    ("fail_open", "message"),
    [
        # the table's keys were the names: {"redact": False} made redact fail open
        (
            {"redact": False},
            r"^guard_fail_open= takes a list of guards, such as \['redact'\]; got the table "
            r"\{'redact': False\} \(a guard's options go in guard_options=\)$",
        ),
        (
            "redact",
            r"^guard_fail_open= takes a list of guards, such as \['redact'\]; got the string "
            r"'redact'$",
        ),
        (["Redact"], r"^guard_fail_open= names the guard 'Redact', which is not in the chain"),
        (["redact\u200b"], r"^guard_fail_open= names the guard 'redact\\u200b', which is not"),
    ],
)
def test_guard_fail_open_that_is_no_list_of_chain_names_is_refused(
    fail_open: Any, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        kit(guards=["redact"], guard_fail_open=fail_open)
    assert err.value.value == (fail_open[0] if isinstance(fail_open, list) else fail_open)


def test_guard_fail_open_as_a_list_still_names_the_guard() -> None:
    chain = kit(guards=["redact"], guard_fail_open=("redact",)).config().guards
    assert chain is not None and [(g.name, g.fail_open) for g in chain.guards] == [("redact", True)]
    chain = kit(guards=["redact"]).config().guards
    assert chain is not None and [g.fail_open for g in chain.guards] == [False]


def test_options_given_in_guards_as_a_table_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"got the table \{'redact': \{'kinds': \['email'\]\}\}"):
        kit(guards={"redact": {"kinds": ["email"]}})


@pytest.mark.parametrize(
    "kinds", [[], ["Email"], ["ｅｍａｉｌ"], ["email\u200b"], [" email"], ["api_key"], [None]]
)
def test_a_kind_that_is_not_exactly_a_detector_is_refused(kinds: list[Any]) -> None:
    with pytest.raises(ConfigError, match=r"^guard 'redact': kinds=.* must be a non-empty list"):
        RedactGuard(kinds=kinds)
    with pytest.raises(ConfigError, match="kinds"):
        kit(guards=["redact"], guard_options={"redact": {"kinds": kinds}})


@pytest.mark.parametrize("kinds", ["email", b"email"])
def test_one_string_of_kinds_is_refused(kinds: Any) -> None:
    with pytest.raises(ConfigError, match=rf"kinds={kinds!r} must be a non-empty list"):
        RedactGuard(kinds=kinds)
    with pytest.raises(ConfigError, match=r"\['kinds'\] .* must be a list of strings or None"):
        kit(guards=["redact"], guard_options={"redact": {"kinds": kinds}})


async def test_the_kinds_taken_redact_in_a_run() -> None:
    model = ScriptedModel(["ok"])
    k = Kit(
        model=model,
        guards=["redact"],
        guard_options={"redact": {"kinds": ["email"]}},
        manager=manager(),
    )
    await Agent.from_config(k.config()).run(f"write to {EMAIL}")
    assert [m.text for m in model.requests[0].messages] == ["write to [redacted email]"]


# ---------------------------------------------------------------------- properties

_LOOKALIKES = st.sampled_from(
    [*PII_DETECTORS, "Email", "EMAIL", "e-mail", "api_key", "apikey", "phone ", "ｃａｒｄ", ""]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LOOKALIKES, max_size=4))
def test_kinds_are_exactly_detectors_or_refused(kinds: list[str]) -> None:
    try:
        guard = RedactGuard(kinds=kinds)
    except ConfigError as err:
        assert not kinds or any(k not in PII_DETECTORS for k in kinds)
        assert repr(kinds) in str(err)
        return
    assert kinds and {d.kind for d in guard.detectors} == set(kinds)
    if "email" in kinds:
        assert guard.check_input(GuardInput(f"to {EMAIL}")).text == "to [redacted email]"


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from(["false", "0", "", "email"]),
    st.lists(_LOOKALIKES, max_size=3),
    st.dictionaries(st.sampled_from(["email", "card"]), st.booleans(), max_size=2),
)
_KEYS = st.sampled_from(["kinds", "input", "output", "cache", "kind", "Input"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_kit_options_build_the_guard_they_say_or_are_refused(options: dict[str, Any]) -> None:
    """Through the kit, options are refused, or the guard has exactly the kinds and switches
    given: nothing is read as a weaker setting."""
    try:
        k = kit(guards=["redact"], guard_options={"redact": options})
    except ConfigError:
        return
    chain = k.config().guards
    assert chain is not None
    guard = chain.guards[0].guard
    assert isinstance(guard, RedactGuard)
    assert set(options) <= {"kinds", "input", "output", "cache"}
    kinds = options.get("kinds")
    assert [d.kind for d in guard.detectors] == [
        k for k in PII_DETECTORS if kinds is None or k in kinds
    ]
    assert guard.input is options.get("input", True)
    assert guard.output is options.get("output", True)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("input", None),
        ("input", 0),
        ("output", "no"),
        ("output", None),
        ("cache", "big"),
        ("cache", -1),
        ("cache", True),
        ("cache", 1.5),
    ],
)
def test_an_option_in_code_of_the_wrong_kind_is_refused(key: str, value: Any) -> None:
    # input=None turned redaction off; cache="big" made every check raise later
    with pytest.raises(ConfigError, match=rf"^guard 'redact': {key}=.* must be ") as err:
        RedactGuard(**{key: value})
    assert err.value.source == f"guard_options['redact']['{key}']"
