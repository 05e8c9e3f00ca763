"""Two command arguments of many commands each: decided at once, a deny never missed.

A call is decided per combination of its split arguments' commands, so two arguments of
1,500 commands each were 2.25 million decisions (half a minute; 3,000 each, minutes): a model
could stall its run with 10 KB of arguments. Past 4,096 combinations the deny rules are read
argument by argument (exactly: each check reads one argument) and the call asks a person.
"""

from __future__ import annotations

import json
import time
from typing import Any

from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from agentkit_policy_rules._engine import SUBJECTS
from agentkit_policy_rules._engine import TOO_MANY
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ToolCall

RULES = [
    Rule("allow", "pipe", id="both-read", match={"a": {"prefix": ["ls"]}, "b": {"prefix": ["ls"]}}),
    Rule("deny", "pipe", id="no-rm", match={"b": {"prefix": ["rm"]}}),
    Rule(
        "deny",
        "pipe",
        id="no-sudo-push",
        match={"a": {"prefix": ["sudo"]}, "b": {"prefix": ["git push"]}},
    ),
    Rule("ask", "pipe", id="curl", match={"a": {"prefix": ["curl"]}}),
]
RANK = {"allow": 0, "ask": 1, "deny": 2}


def decide(a: str, b: str) -> Any:
    call = ToolCall("c", "pipe", json.dumps({"a": a, "b": b}))
    return Policy(RULES, default="allow").would(call, source="tools")


def test_two_long_command_lines_are_decided_at_once() -> None:
    started = time.monotonic()
    decision = decide("ls;" * 1500, "ls;" * 1500)
    assert time.monotonic() - started < 5
    assert (decision.kind, decision.rule) == ("ask", TOO_MANY)
    assert "1500 of 'a' by 1500 of 'b' commands" in decision.reason


def test_a_deny_among_them_is_found_and_shown() -> None:
    decision = decide("ls;" * 1500, "ls;" * 1500 + "rm -rf /")
    assert (decision.kind, decision.rule) == ("deny", "no-rm")
    assert "`rm -rf /`" in decision.reason
    both = decide("ls;" * 1500 + "sudo -s", "ls;" * 1500 + "git push -f")
    assert (both.kind, both.rule) == ("deny", "no-sudo-push")
    assert "`sudo -s`, `git push -f`" in both.reason
    assert decide("sudo x;" * 1500, "ls;" * 1500).rule == TOO_MANY  # one half of the rule only


COMMANDS = st.lists(
    st.sampled_from(["ls", "ls -l", "rm -rf x", "git push", "sudo -s", "curl x", "$(x)", "cat"]),
    min_size=1,
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(COMMANDS, COMMANDS)
def test_past_the_bound_a_deny_is_a_deny_and_nothing_is_weaker(a: list[str], b: list[str]) -> None:
    """Repeating the commands changes no combination, only how many there are."""
    small = decide(";".join(a), ";".join(b))
    times = SUBJECTS // (len(a) * len(b)) + 1
    big = decide(";".join(a * times), ";".join(b * times))
    assert (big.kind == "deny") is (small.kind == "deny"), (small, big)
    if big.kind != "deny":
        assert (big.kind, big.rule) == ("ask", TOO_MANY)
    assert RANK[big.kind] >= RANK[small.kind]
