"""A tool or source name in a rule that only looks like a plain one is refused, not dead.

``tool = "bаsh"`` with a Cyrillic ``а`` reads as bash on the page and names no tool the agent
has, so a deny rule written so never applied; ``ｂａｓｈ`` in fullwidth is the same. Such a name
is a ConfigError naming the character and what it reads as; a name in another script, or with
accents (``café``, ``straße``, ``сеть``), is a name like any other.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import ToolCall


@pytest.mark.parametrize(
    ("written", "what", "char", "reads"),
    [
        ('tool = "b\\u0430sh"', "tool", "\u0430", "a"),  # CYRILLIC SMALL LETTER A
        ('tool = ["read", "\\uff42\\uff41\\uff53\\uff48"]', "tool", "\uff42", "b"),  # fullwidth
        ('tool = "r\\u043em"', "tool", "\u043e", "o"),  # CYRILLIC SMALL LETTER O
        ('tool = "\\ufb01le"', "tool", "\ufb01", "fi"),  # the ligature fi
        ('tool = "bash"\nsource = "mcp:\\uff53*"', "source", "\uff53", "s"),
    ],
)
def test_a_look_alike_name_in_a_deny_rule_is_refused_not_a_dead_rule(
    tmp_path: Path, written: str, what: str, char: str, reads: str
) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(f'[[rules]]\nid = "d"\nverdict = "deny"\n{written}\n', encoding="utf-8")
    line = 4 + written.count("\n")  # the line the name is on
    shown = f"holds U+{ord(char):04X} ({unicodedata.name(char)}), which reads as {reads!r}"
    expected = re.escape(f"{path}:{line}: {what} ") + ".*" + re.escape(shown)
    with pytest.raises(ConfigError, match=expected):
        Policy.from_file(path)


@pytest.mark.parametrize("name", ["café", "straße", "сеть", "ツール", "naïve_tool", "Bash"])
def test_a_name_in_another_script_or_with_accents_is_a_name(name: str) -> None:
    policy = Policy([Rule("deny", name, id="d")], default="allow")
    call = ToolCall("c", name, json.dumps({}))
    assert policy.would(call, source="tools").kind == "deny"


# letters of other scripts that read as Latin ones, and Latin ones with and without accents
LETTERS = st.sampled_from([*"bashgitpxyzéü", "\u0430", "\u0435", "\u043e", "\u0440", "\uff41"])


@given(st.text(LETTERS, min_size=1, max_size=6))
def test_a_name_a_rule_takes_is_one_no_plainer_name_looks_like(name: str) -> None:
    """If a rule takes ``name``, nothing it could be mistaken for is another, plain, name."""
    try:
        Rule("deny", name)
    except ConfigError:
        return
    plain = unicodedata.normalize("NFKC", name)
    imitating = {"\u0430", "\u0435", "\u043e", "\u0440"}
    assert plain == name and not (set(name) & imitating and any(c.isascii() for c in name)), name
