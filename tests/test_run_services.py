"""A run's services are one typed record, ``ctx.services``; the flat keywords are its shorthands."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import RunContext
from agentkit_core.plugin import NullRecorder
from agentkit_core.plugin import RunServices
from agentkit_core.testing import DictStore

NAMES = (
    "checkpointer",
    "store",
    "elicitor",
    "guardrail",
    "policy",
    "verdict_observer",
    "guards",
    "deps",
)


@given(st.dictionaries(st.sampled_from(NAMES), st.builds(object), max_size=len(NAMES)))
@settings(max_examples=50)
def test_the_keywords_fill_the_record_and_the_attributes_read_it(given: dict[str, object]) -> None:
    ctx = RunContext(**given)  # type: ignore[arg-type]
    same = RunContext(services=RunServices(**given))  # type: ignore[arg-type]
    for name in NAMES:
        assert getattr(ctx, name) is getattr(ctx.services, name) is given.get(name)
        assert getattr(same, name) is given.get(name)


def test_the_record_shows_an_attribute_written_since() -> None:
    ctx = RunContext()
    store = DictStore()
    ctx.store = store
    assert ctx.services.store is store
    assert isinstance(ctx.recorder, NullRecorder)  # no recorder: one that records nothing


def test_a_service_given_twice_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match="services= and deps="):
        RunContext(services=RunServices(), deps={"db": 1})


def test_an_unknown_service_names_the_known_ones() -> None:
    with pytest.raises(TypeError, match=r"'checkpointr'.*checkpointer, store"):
        RunContext(checkpointr=None)  # type: ignore[call-arg]


def test_two_runs_never_share_a_record() -> None:
    first, second = RunContext(), RunContext()
    first.deps = "mine"
    assert second.deps is None and second.services.deps is None
