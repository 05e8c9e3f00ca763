"""The engine: indexed rules decide as a plain scan of every rule would, deny over ask over
allow; source labels; bare denies; grants read through the policy's tool settings."""

from __future__ import annotations

import fnmatch
import json

import pytest
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from agentkit_policy_rules import ToolSettings
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ToolCall
from agentkit_core.plugin import Grant

RANK = {"allow": 0, "ask": 1, "deny": 2}
NAMES = ["bash", "read", "read_file", "mcp_a", "mcp_b", "write"]
PATTERNS = [*NAMES, "read*", "mcp_*", "*", "?ash", "[rw]*"]


def call(tool: str, arguments: object = None) -> ToolCall:
    return ToolCall("c1", tool, json.dumps(arguments if arguments is not None else {}))


rules = st.lists(
    st.tuples(
        st.sampled_from(["allow", "ask", "deny"]),
        st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3),
        st.sampled_from([None, "mcp:*", "tools"]),
    ),
    max_size=25,
)


@settings(max_examples=300)
@given(
    rules,
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(NAMES),
    st.sampled_from(["tools", "mcp:#1 files"]),
)
def test_the_index_decides_as_a_scan_of_every_rule(
    specs: list[tuple[str, list[str], str | None]], default: str, tool: str, label: str
) -> None:
    policy = Policy(
        [Rule(v, tools, source=src, id=f"r{i}") for i, (v, tools, src) in enumerate(specs)],
        default=default,
    )
    matching = [
        (i, v)
        for i, (v, tools, src) in enumerate(specs)
        if any(fnmatch.fnmatchcase(tool, t) for t in tools)
        and (src is None or fnmatch.fnmatchcase(label, src))
    ]
    decision = policy.would(call(tool), source=label)
    if not matching:
        assert (decision.kind, decision.rule) == (default, "default")
        return
    strongest = max(RANK[v] for _, v in matching)
    first = next(i for i, v in matching if RANK[v] == strongest)
    assert (decision.kind, decision.rule) == (
        {v: k for k, v in RANK.items()}[strongest],
        f"r{first}",
    )
    # a bare deny is exactly what removes a tool
    removed = any(v == "deny" for _, v in matching)
    assert policy.removes(tool, label) is removed
    assert policy.offers(tool, label) is not removed


def test_a_source_rule_reads_the_label_and_is_careful_without_one() -> None:
    policy = Policy(
        [
            Rule("deny", "*", source="mcp:*", id="no-mcp"),
            Rule("allow", "read", source="tools", id="own-reads"),
        ]
    )
    assert policy.would(call("read"), source="tools").rule == "own-reads"
    assert policy.would(call("read"), source="mcp:#1 files").kind == "deny"
    unknown = policy.would(call("read"))  # never offered here, so its source is not known
    assert (unknown.kind, unknown.rule) == ("ask", "no-mcp")
    assert "source is not known" in unknown.reason
    policy.offers("read", "tools")  # an agent listing its tools tells the engine
    assert policy.would(call("read")).rule == "own-reads"


def test_a_deny_with_matchers_removes_nothing() -> None:
    policy = Policy([Rule("deny", "bash", match={"command": {"prefix": "rm"}})])
    assert policy.offers("bash", "tools")


def test_reasons_name_the_rule_the_tool_and_the_command() -> None:
    policy = Policy(
        [
            Rule(
                "deny",
                "bash",
                id="no-push",
                match={"command": {"prefix": "git push"}},
                reason="pushing is for people",
            )
        ]
    )
    decision = policy.would(call("bash", {"command": "git status && git push -f"}))
    assert decision.reason == "rule 'no-push' denies 'bash' (`git push -f`): pushing is for people"
    assert decision.source == "policy-rules"
    assert "the policy's default is ask" in policy.would(call("other")).reason


def test_unreadable_arguments_are_denied_whatever_the_rules() -> None:
    """The agent refuses to run them, and no rule can tell what they would do."""
    policy = Policy(
        [
            Rule("allow", "bash", id="ls", match={"command": {"prefix": "ls"}}),
            Rule("allow", "read", id="reads"),
        ],
        default="allow",
    )
    for broken in ("not json", "[1]", '"ls"', '{"command": "ls", "command": "rm -rf /"}'):
        for tool in ("bash", "read", "unnamed"):  # a matcher, a bare rule, the default
            decision = policy.would(ToolCall("c", tool, broken))
            assert (decision.kind, decision.rule) == ("deny", "unreadable-arguments")
    decision = policy.would(ToolCall("c", "bash", '{"command": "ls", "command": "rm -rf /"}'))
    assert decision.reason == (
        "the arguments of 'bash' cannot be read (duplicate key 'command' at position 18): "
        "no rule can tell what the call would do"
    )


def test_unmatched_tools_and_globs_are_warnings(tmp_path: object) -> None:
    policy = Policy(
        [
            Rule("allow", ["bash", "bahs"], id="shell"),
            Rule("deny", "mcp_*", id="no-mcp"),
            Rule("ask", "read*", id="reads"),
        ]
    )
    assert policy.unmatched(["bash", "read_file"]) == [
        "rule 'shell': tool 'bahs' is not offered",
        "rule 'no-mcp': tool glob 'mcp_*' matches no offered tool",
    ]


def test_rules_are_named_by_position_without_an_id() -> None:
    policy = Policy([Rule("allow", "a"), Rule("deny", "b", id="b-out"), Rule("ask", "c")])
    assert [r.id for r in policy.rules] == ["rule-1", "b-out", "rule-3"]
    assert repr(policy) == "Policy(default='ask', rules=['rule-1', 'b-out', 'rule-3'])"


# ----------------------------------------------------------------- grants


def granted_policy() -> Policy:
    return Policy(
        [Rule("deny", "bash", id="no-push", match={"command": {"prefix": "git push"}})],
        tools={
            "bash": {"aliases": ["Bash"], "specifier": {"command": "prefix"}},
            "read_file": ToolSettings(aliases=["Read"], specifier=("path", "within")),
        },
    )


def test_grant_entries_read_through_aliases_and_specifiers() -> None:
    policy = granted_policy()
    grant = Grant(
        "skill:release",
        ("Bash(git log:*)", "Read(./docs/**)", "Grep", "Bash(git push:*)", "Edit(x)", "Bash()"),
        True,
        scope="s",
        run="r",
    )
    report = policy.grant(grant)
    assert report.granted == ("Bash(git log:*)", "Read(./docs/**)", "Grep", "Bash(git push:*)")
    assert [e for e, _ in report.refused] == ["Edit(x)", "Bash()"]
    assert "give [tools.Edit] a specifier" in report.refused[0][1]
    assert "specifies nothing" in report.refused[1][1]

    def kind(tool: str, arguments: object) -> tuple[str, str]:
        d = policy.would(call(tool, arguments), scope="s")
        return d.kind, d.rule

    assert kind("bash", {"command": "git log --oneline"}) == (
        "allow",
        "skill:release:Bash(git log:*)",
    )
    assert kind("bash", {"command": "git push"}) == ("deny", "no-push")  # a deny stays a deny
    assert kind("read_file", {"path": "docs/a.md"})[0] == "allow"
    assert kind("read_file", {"path": "src/a.py"})[0] == "ask"
    assert kind("Grep", {}) == ("allow", "skill:release:Grep")


def test_a_bare_entry_grants_the_whole_tool_but_not_past_a_deny() -> None:
    policy = granted_policy()
    policy.grant(Grant("skill:x", ("Bash",), True, scope="s", run="r"))
    assert policy.would(call("bash", {"command": "rm -rf build"}), scope="s").kind == "allow"
    assert policy.would(call("bash", {"command": "git push"}), scope="s").kind == "deny"


@pytest.mark.parametrize("entry", ["", "   ", "(x)", "a(b"])
def test_an_entry_that_is_no_tool_is_refused(entry: str) -> None:
    report = granted_policy().grant(Grant("skill:x", (entry,), True, scope="s"))
    assert report.granted == () and len(report.refused) == 1
