"""A deny or ask regex reads a value of several lines whole: ``.`` matches a newline there.

``re.fullmatch("rm .*", "rm -rf /\\n")`` is no match, since ``.`` stops at a newline, so a deny
written ``regex = ["rm .*"]`` let a command through that ended in a newline or went on on a
second line, and the shell ran it. An allow regex still stops at a newline, so ``git status.*``
never allows ``git status\\nrm -rf /``.
"""

from __future__ import annotations

import json

import pytest
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import ToolCall


def decide(policy: Policy, command: str) -> str:
    call = ToolCall("c", "bash", json.dumps({"command": command}))
    return policy.would(call, source="tools").kind


DENY = Policy(
    [Rule("deny", "bash", id="no-rm", match={"command": {"regex": ["rm .*"]}})], default="allow"
)
ASK = Policy([Rule("ask", "bash", match={"command": {"regex": ["curl .*"]}})], default="allow")
ALLOW = Policy(
    [Rule("allow", "bash", match={"command": {"regex": ["git status.*"]}})], default="deny"
)


@pytest.mark.parametrize("command", ["rm -rf /\n", "rm -rf /\nls", "rm x\r\ny", "rm \n"])
def test_a_deny_regex_holds_past_a_newline(command: str) -> None:
    assert decide(DENY, command) == "deny"
    assert decide(ASK, "curl" + command[2:]) == "ask"


def test_an_allow_regex_still_stops_at_a_newline() -> None:
    assert decide(ALLOW, "git status -s") == "allow"
    assert decide(ALLOW, "git status\nrm -rf /") == "deny"


@given(st.one_of(st.text(), st.text(st.sampled_from("ab -/\n\r\u2028"))))
def test_a_deny_regex_any_text_follows_denies_every_such_command(rest: str) -> None:
    assert decide(DENY, "rm " + rest) == "deny"
