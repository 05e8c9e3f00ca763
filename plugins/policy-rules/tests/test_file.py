"""The policy file: the issue's example reads as written, and every problem names the file, the
line and the valid choices."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Prefix
from agentkit_policy_rules import Rule
from agentkit_policy_rules import ToolSettings
from agentkit_policy_rules import Within

from agentkit_core import ConfigError
from agentkit_core import PluginManager
from agentkit_core import ToolCall
from agentkit_core.plugin import load_policy

EXAMPLE = """\
default = "ask"                      # for a tool no rule names

[[rules]]
id = "read-only-git"
verdict = "allow"
tool = "bash"
match = { command = { prefix = ["git status", "git diff"] } }

[[rules]]
id = "no-push"
verdict = "deny"
tool = "bash"
match = { command = { prefix = ["git push"] } }

[[rules]]
id = "workspace-writes"
verdict = "allow"
tool = "write_file"
match = { path = { within = "." } }
"""


def write(tmp_path: Path, text: str, name: str = "policy.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def decide(policy: Policy, tool: str, arguments: str) -> tuple[str, str]:
    d = policy.would(ToolCall("c", tool, arguments), source="tools")
    return d.kind, d.rule


def test_the_issues_example_reads_and_decides(tmp_path: Path) -> None:
    policy = Policy.from_file(write(tmp_path, EXAMPLE), cwd=tmp_path)
    assert [r.id for r in policy.rules] == ["read-only-git", "no-push", "workspace-writes"]
    assert [r.line for r in policy.rules] == [3, 9, 15]
    assert decide(policy, "bash", '{"command": "git status"}') == ("allow", "read-only-git")
    assert decide(policy, "bash", '{"command": "git push origin main"}') == ("deny", "no-push")
    assert decide(policy, "bash", '{"command": "ls"}') == ("ask", "default")
    assert decide(policy, "write_file", '{"path": "src/a.py"}') == ("allow", "workspace-writes")
    assert decide(policy, "write_file", '{"path": "../a.py"}') == ("ask", "default")
    assert decide(policy, "other", "{}") == ("ask", "default")


def test_the_file_and_the_code_are_one_policy(tmp_path: Path) -> None:
    from_file = Policy.from_file(write(tmp_path, EXAMPLE), cwd=tmp_path)
    in_code = Policy(
        [
            Rule(
                "allow",
                "bash",
                id="read-only-git",
                match={"command": {"prefix": ["git status", "git diff"]}},
            ),
            Rule("deny", "bash", id="no-push", match={"command": Prefix("git push")}),
            Rule("allow", "write_file", id="workspace-writes", match={"path": Within(".")}),
        ],
        cwd=tmp_path,
    )
    for tool, arguments in [
        ("bash", '{"command": "git diff --stat"}'),
        ("bash", '{"command": "git push"}'),
        ("bash", '{"command": "rm -rf /"}'),
        ("write_file", '{"path": "x"}'),
        ("write_file", '{"path": "/etc/passwd"}'),
    ]:
        assert decide(from_file, tool, arguments) == decide(in_code, tool, arguments)


def test_the_default_is_ask_unless_the_file_says(tmp_path: Path) -> None:
    assert Policy.from_file(write(tmp_path, "")).default == "ask"
    policy = Policy.from_file(write(tmp_path, 'default = "deny"\n'))
    assert decide(policy, "anything", "{}") == ("deny", "default")


def test_the_engine_is_found_by_load_policy(tmp_path: Path) -> None:
    import agentkit_policy_rules

    pm = PluginManager(entry_points=False, plugins=[agentkit_policy_rules])
    policy = load_policy(write(tmp_path, EXAMPLE), manager=pm)
    assert isinstance(policy, Policy) and policy.path == str(tmp_path / "policy.toml")


BAD = [
    (
        'default = "ask"\ndefualt = "deny"\n',
        2,
        "unknown key 'defualt' (did you mean 'default'?); the keys are default, rules, tools",
    ),
    ('default = "maybe"\n', 1, "unknown verdict 'maybe'; the verdicts are allow, ask, deny"),
    (
        '[[rules]]\nid = "a"\nverdict = "allow"\ntool = "x"\n\n[[rules]]\nid = "b"\n'
        'verdcit = "deny"\ntool = "y"\n',
        8,
        "unknown key 'verdcit' (did you mean 'verdict'?); the keys are id, verdict, tool, "
        "source, match, reason",
    ),
    (
        '[[rules]]\nverdict = "permit"\ntool = "x"\n',
        2,
        "unknown verdict 'permit'; the verdicts are allow, ask, deny",
    ),
    (
        '[[rules]]\nverdict = "allow"\ntool = "bash"\nmatch = { command = { prfix = ["git"] } }\n',
        4,
        "unknown matcher 'prfix' (did you mean 'prefix'?); the matchers are equals, prefix, "
        "regex, within",
    ),
    (
        '[[rules]]\nverdict = "allow"\ntool = "bash"\n\n[rules.match.command]\nprefix = ["a"]\n'
        'glob = ["b"]\n',
        7,
        "unknown matcher 'glob'; the matchers are equals, prefix, regex, within",
    ),
    (
        '[tools.bash]\naliases = ["Bash"]\nspecifier = { command = "prefx" }\n',
        3,
        "unknown matcher 'prefx' (did you mean 'prefix'?)",
    ),
    ('[tools.bash]\nalias = ["Bash"]\n', 2, "unknown key 'alias' (did you mean 'aliases'?)"),
    ('[[rules]]\nverdict = "allow"\n', 1, "the rule has no tool; name one, or a glob"),
    ('[[rules]]\ntool = "x"\n', 1, "the rule has no verdict; give one of allow, ask, deny"),
    (
        '[[rules]]\nverdict = "allow"\ntool = "x"\nmatch = { command = { regex = "(" } }\n',
        4,
        "regex of argument 'command': regex '(' does not compile",
    ),
    ('[[rules]]\nverdict = "allow"\ntool = 3\n', 3, "tool must be a non-empty string"),
    ('rules = "all"\n', 1, "rules must be an array of tables"),
]


@pytest.mark.parametrize(("text", "line", "message"), BAD)
def test_a_problem_names_the_file_the_line_and_the_choices(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=re.escape(f"{path}:{line}: {message}")):
        Policy.from_file(path)


def test_two_rules_with_one_id_name_both_lines(tmp_path: Path) -> None:
    text = (
        '[[rules]]\nid = "a"\nverdict = "allow"\ntool = "x"\n\n'
        '[[rules]]\nid = "a"\nverdict = "deny"\ntool = "y"\n'
    )
    with pytest.raises(ConfigError, match=r"two rules have the id 'a' \(lines 1 and 6\)"):
        Policy.from_file(write(tmp_path, text))


def test_a_file_that_is_not_toml_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "[[rules]\n")
    with pytest.raises(ConfigError, match=f"cannot read the policy file {re.escape(str(path))}"):
        Policy.from_file(path)
    with pytest.raises(ConfigError, match="cannot read the policy file"):
        Policy.from_file(tmp_path / "missing.toml")


def test_rules_made_in_code_are_checked_the_same_way() -> None:
    with pytest.raises(ConfigError, match=r"Rule\(\.\.\.\): unknown verdict 'yes'"):
        Rule("yes", "x")
    with pytest.raises(ConfigError, match="unknown matcher 'starts'"):
        Rule("allow", "x", match={"a": {"starts": "b"}})
    with pytest.raises(ConfigError, match=r"Policy\(\.\.\.\): unknown verdict 'never'"):
        Policy(default="never")
    with pytest.raises(ConfigError, match="rule 1 is str"):
        Policy(["allow bash"])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="specifier must name one argument"):
        ToolSettings(specifier={"a": "prefix", "b": "regex"})
