"""The limits in a kit: refused with the numbers, recorded, options checked."""

from __future__ import annotations

import agentkit_guard_limits
import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import GuardBlocked
from agentkit_core import Kit
from agentkit_core import PluginManager
from agentkit_core.plugin import Verdict
from agentkit_core.testing import ScriptedModel


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_guard_limits, name="limits")
    return pm


def kit(model: ScriptedModel, seen: list[Verdict]) -> Kit:
    return Kit(
        model=model,
        instructions="Be brief.",
        guards=["max-output", "max-input"],
        guard_options={"max-input": {"max_tokens": 60}, "max-output": {"max_chars": 20}},
        manager=manager(),
        verdict_observer=seen.append,
    )


async def test_a_request_over_the_limit_is_refused_with_the_numbers() -> None:
    seen: list[Verdict] = []
    model = ScriptedModel(["ok"])
    k = kit(model, seen)
    assert k.config().guards is not None and k.config().guards.names == ["max-input", "max-output"]
    with pytest.raises(GuardBlocked, match=r"over max_tokens=60") as err:
        await Agent.from_config(k.config()).run("word " * 200)
    assert err.value.guard == "max-input" and err.value.subject == "message/0"
    assert model.requests == []
    assert [(v.rule, v.verdict) for v in seen] == [("max-input", "block")]
    assert "tokens" in seen[0].reason


async def test_a_long_answer_is_refused_and_a_short_one_passes() -> None:
    seen: list[Verdict] = []
    short = await Agent.from_config(kit(ScriptedModel(["fine"]), seen).config()).run("hi")
    assert short.output == "fine" and seen == []
    with pytest.raises(GuardBlocked, match="the answer is 30 characters, over max_chars=20"):
        await Agent.from_config(kit(ScriptedModel(["x" * 30]), seen).config()).run("hi")


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        (0, r"guard 'max-input': max_tokens=.* at least 1"),
        (-3, r"guard 'max-input': max_tokens=.* at least 1"),
        # not an integer at all: the lookup refuses it against MaxInputOptions, naming the kind
        (2.5, r"guard_options\['max-input'\]\['max_tokens'\] \(guard 'max-input'.*an integer"),
        ("many", r"guard_options\['max-input'\]\['max_tokens'\] \(guard 'max-input'.*an integer"),
        (True, r"guard_options\['max-input'\]\['max_tokens'\] \(guard 'max-input'.*an integer"),
    ],
)
def test_a_bad_limit_is_refused_naming_it(bad: object, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        Kit(
            model="test",
            guards=["max-input"],
            guard_options={"max-input": {"max_tokens": bad}},
            manager=manager(),
        )


@pytest.mark.parametrize("text", ["漢字" * 40, "👍" * 80, "a" + "\u0301" * 79])
async def test_text_that_is_not_ascii_is_not_let_through_at_a_quarter_of_its_size(
    text: str,
) -> None:
    # 80 characters, each a token or more to any tokenizer: over 60 (read as 20 tokens before)
    seen: list[Verdict] = []
    model = ScriptedModel(["ok"])
    with pytest.raises(GuardBlocked, match=r"over max_tokens=60"):
        await Agent.from_config(kit(model, seen).config()).run(text)
    assert model.requests == []
