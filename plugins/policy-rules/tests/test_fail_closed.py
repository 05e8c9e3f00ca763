"""A malformed rule fails closed: it is refused where it is read, naming the value and its place,
never read as something weaker (a falsy ``match`` as no matchers, a string of aliases as its
characters)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import agentkit_policy_rules
import pytest
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from agentkit_policy_rules import ToolSettings
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import Message
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core import tool
from agentkit_core.plugin import Grant
from agentkit_core.testing import ScriptedModel

ALLOW_BASH = '[[rules]]\nid = "ls-only"\nverdict = "allow"\ntool = "bash"\n'


def manager() -> PluginManager:
    pm = PluginManager(entry_points=False)
    pm.register(agentkit_policy_rules, name="policy-rules")
    return pm


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def decide(policy: Policy, command: str) -> tuple[str, str]:
    d = policy.would(ToolCall("c", "bash", json.dumps({"command": command})), source="tools")
    return d.kind, d.rule


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("match = []", "[]"),
        ("match = {}", "{}"),
        ("match = false", "False"),
        ('match = ""', "''"),
        ("match = 0", "0"),
    ],
)
def test_a_falsy_match_in_a_file_is_refused_not_read_as_every_call(
    tmp_path: Path, written: str, shown: str
) -> None:
    # An allow rule with no matchers allows every call of its tool: an empty or wrongly typed
    # match must not become one.
    path = write(tmp_path, ALLOW_BASH + written + "\n")
    with pytest.raises(ConfigError) as err:
        Policy.from_file(path)
    assert str(err.value).startswith(f"{path}:5: match must be a table of arguments")
    assert f"got {shown}; leave match out" in str(err.value)


@pytest.mark.parametrize("value", [[], {}, False, "", 0, ()])
def test_a_falsy_match_in_code_is_refused(value: Any) -> None:
    with pytest.raises(ConfigError, match=r"^Rule\(\.\.\.\): match must be a table") as err:
        Rule("allow", "bash", match=value)
    assert f"got {value!r}" in str(err.value)


def test_no_match_at_all_is_still_a_rule_about_every_call() -> None:
    assert Rule("allow", "bash").bare and Rule("deny", "bash", match=None).bare
    policy = Policy([Rule("deny", "wipe", id="no-wipe")])
    assert policy.removes("wipe", "tools")


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("id = false", "id must be a string, got False"),
        ("id = 0", "id must be a string, got 0"),
        ("id = []", "id must be a string, got []"),
        ("reason = false", "reason must be a string, got False"),
        ("reason = []", "reason must be a string, got []"),
    ],
)
def test_a_wrongly_typed_id_or_reason_is_refused_not_dropped(
    tmp_path: Path, written: str, message: str
) -> None:
    text = '[[rules]]\nverdict = "deny"\ntool = "bash"\n' + written + "\n"
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        Policy.from_file(path)
    assert str(err.value) == f"{path}:4: {message}"


@pytest.mark.parametrize(
    ("written", "shown"),
    [('aliases = "Bash"', "'Bash'"), ("aliases = false", "False"), ("aliases = {}", "{}")],
)
def test_aliases_that_are_no_list_are_refused_in_a_file(
    tmp_path: Path, written: str, shown: str
) -> None:
    path = write(tmp_path, f"[tools.bash]\n{written}\n")
    with pytest.raises(ConfigError) as err:
        Policy.from_file(path)
    assert str(err.value) == f"{path}:2: aliases must be a list of names, got {shown}"


def test_aliases_as_one_string_are_not_read_as_its_letters() -> None:
    # list("Bash") is B, a, s, h: a skill granting the tool "a" would have been granted bash.
    with pytest.raises(ConfigError, match=r"aliases must be a list of names, got 'Bash'"):
        ToolSettings(aliases="Bash")
    with pytest.raises(ConfigError, match=r"aliases must be a list of names, got None"):
        ToolSettings(aliases=None)  # type: ignore[arg-type]
    policy = Policy(tools={"bash": ToolSettings(aliases=("Bash",))})
    call = ToolCall("c", "bash", "{}")
    by_letter, _, _ = policy.compile_grant(Grant("skill:x", ("a",)))
    assert policy.evaluate(call, "tools", [by_letter]).kind == "ask"
    by_alias, _, _ = policy.compile_grant(Grant("skill:x", ("Bash(*)",)))
    assert policy.evaluate(call, "tools", [by_alias]).kind == "allow"


@pytest.mark.parametrize("tools", [[], "", 0, "bash", [("bash", {"aliases": ["Bash"]})]])
def test_tools_that_are_no_table_are_refused_in_code(tools: Any) -> None:
    # a falsy value was read as no tool settings, a list of pairs was an AttributeError
    with pytest.raises(ConfigError) as err:
        Policy(tools=tools)
    assert str(err.value) == f"Policy(...): tools must be a table of tool names, got {tools!r}"
    assert Policy(tools=None).tools == {} and Policy().tools == {}


def test_a_kit_refuses_a_policy_file_with_an_empty_match(tmp_path: Path) -> None:
    path = write(tmp_path, ALLOW_BASH + "match = []\n")
    with pytest.raises(ConfigError, match=rf"^{path}:5: match must be a table"):
        Kit(model=ScriptedModel(["ok"]), policy=str(path), manager=manager())


async def test_the_run_under_the_fixed_rule_allows_only_what_it_names(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool
    def bash(command: str) -> str:
        """Run a command."""
        ran.append(command)
        return "done"

    path = write(
        tmp_path, 'default = "deny"\n' + ALLOW_BASH + 'match = { command = { prefix = ["ls"] } }\n'
    )
    calls = [
        ToolCall("c1", "bash", '{"command": "ls -l"}'),
        ToolCall("c2", "bash", '{"command": "rm -rf /"}'),
    ]
    kit = Kit(
        model=ScriptedModel([Message.assistant("", calls), "ok"]),
        tools=[bash],
        policy=str(path),
        manager=manager(),
    )
    result = await Agent.from_config(kit.config()).run("clean up")
    assert (result.status, result.output, ran) == ("done", "ok", ["ls -l"])
    (refused,) = [m for m in result.transcript if m.role == "tool" and m.tool_call_id == "c2"]
    assert refused.is_error and "the policy's default is deny" in refused.text


def test_an_engine_named_without_a_policy_is_refused_not_ignored(tmp_path: Path) -> None:
    # policy_engine= alone built a kit with no policy at all: every call unchecked.
    message = (
        "policy_engine='rules' names the engine that reads policy=, and no policy= is given, so "
        "no tool call would be checked; give policy= (a policy file) or leave policy_engine out"
    )
    with pytest.raises(ConfigError) as err:
        Kit(model=ScriptedModel(["ok"]), policy_engine="rules", manager=manager())
    assert (str(err.value), err.value.source) == (message, "policy_engine=")
    with pytest.raises(ConfigError, match=re.escape(message)):
        Agent("a", ScriptedModel(["ok"]), policy_engine="rules", manager=manager())
    config = tmp_path / "agentkit.toml"
    config.write_text('[kit]\nmodel = "test"\npolicy_engine = "rules"\n')
    with pytest.raises(ConfigError, match=re.escape(message)):
        Kit.from_file(config, manager=manager())
    policy = write(tmp_path, 'default = "deny"\n')
    config.write_text(f'[kit]\nmodel = "test"\npolicy = {str(policy)!r}\npolicy_engine = "rules"\n')
    kit = Kit.from_file(config, manager=manager())
    assert isinstance(kit.policy, Policy) and kit.policy.default == "deny"


@pytest.mark.parametrize(
    ("written", "what", "shown", "code"),
    [
        ('tool = "bash\\u200b"', "tool", "'bash\\u200b'", "200B"),
        ('tool = ["bash", "sh\\u2060"]', "tool", "'sh\\u2060'", "2060"),
        ('tool = "bash"\nsource = "mcp:\\u200d*"', "source", "'mcp:\\u200d*'", "200D"),
        (
            'tool = "bash"\nmatch = { command = { prefix = ["rm\\u200b -rf"] } }',
            "prefix",
            "'rm\\u200b -rf'",
            "200B",
        ),
        (
            'tool = "write"\nmatch = { path = { within = ["/etc\\ufeff"] } }',
            "within",
            "'/etc\\ufeff'",
            "FEFF",
        ),
    ],
)
def test_an_invisible_character_in_a_deny_rule_is_refused_not_a_dead_rule(
    tmp_path: Path, written: str, what: str, shown: str, code: str
) -> None:
    # "rm\u200b" reads as rm on the page and matches no command: the deny would never apply
    path = write(tmp_path, f'[[rules]]\nid = "d"\nverdict = "deny"\n{written}\n')
    with pytest.raises(ConfigError) as err:
        Policy.from_file(path)
    assert f"{what} {shown} holds the invisible character U+{code}; remove it" in str(err.value)
    assert str(err.value).startswith(f"{path}:")


def test_a_regex_may_still_seek_an_invisible_character() -> None:
    policy = Policy([Rule("deny", "bash", id="zw", match={"command": {"regex": [".*\u200b.*"]}})])
    assert decide(policy, "echo a\u200bb") == ("deny", "zw")
    assert decide(policy, "echo ab")[0] == "ask"


# ---------------------------------------------------------------------- properties

_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(_JSONISH, st.sampled_from(["allow", "ask", "deny"]))
def test_no_match_value_but_none_makes_a_bare_rule(value: Any, verdict: str) -> None:
    """Whatever ``match`` holds, a rule is either refused or has matchers; only None is bare."""
    try:
        rule = Rule(verdict, "bash", match=value)
    except ConfigError as err:
        assert str(err).startswith("Rule(...): ")
        return
    assert rule.bare is (value is None)


@settings(max_examples=200, deadline=None)
@given(_JSONISH.filter(lambda v: not isinstance(v, str)))
def test_an_id_or_reason_that_is_no_string_is_refused(value: Any) -> None:
    for key in ("id", "reason"):
        with pytest.raises(ConfigError, match=rf"^Rule\(\.\.\.\): {key} must be a string, got "):
            Rule("deny", "bash", **{key: value})


@settings(max_examples=200, deadline=None)
@given(_JSONISH)
def test_aliases_are_a_list_of_names_or_refused(value: Any) -> None:
    try:
        made = ToolSettings(aliases=value)
    except ConfigError as err:
        assert str(err).startswith("ToolSettings(...): aliases must be a list of names, got ")
        return
    assert isinstance(value, list) and list(made.aliases) == value


_INVISIBLE = "\u200b\u200d\u2060\ufeff\x00\x1b"
_WORDS = st.text(alphabet="ab-\u00a0 " + _INVISIBLE, max_size=10)


@settings(max_examples=300, deadline=None)
@given(_WORDS)
def test_a_deny_prefix_is_refused_or_denies_the_command_it_shows(text: str) -> None:
    """A prefix is refused, or denies the command it shows: its words as a person reads them,
    with nothing between their letters that shows nothing."""
    try:
        rule = Rule("deny", "bash", id="no", match={"command": {"prefix": [text]}})
    except ConfigError as err:
        assert not text.strip() or any(c in text for c in _INVISIBLE), str(err)
        return
    shown = " ".join("".join(c for c in text if c not in _INVISIBLE).split())
    assert decide(Policy([rule]), shown) == ("deny", "no")
