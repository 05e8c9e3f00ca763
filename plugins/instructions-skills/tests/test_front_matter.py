"""Front matter is YAML: blocks, quotes and nesting as YAML has them; errors name lines."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from agentkit_instructions_skills import Skills
from agentkit_instructions_skills import parse_skill_file
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError


def write(root: Path, front: str, body: str = "Do it.") -> Path:
    path = root / "SKILL.md"
    path.write_text(f"---\n{front}---\n{body}\n", encoding="utf-8")
    return path


def test_a_folded_description_is_its_text(tmp_path: Path) -> None:
    path = write(tmp_path, "name: release\ndescription: >\n  Cut a release\n  of this repository\n")
    skill = parse_skill_file(path)
    assert skill.description == "Cut a release of this repository"
    assert skill.line == "- release: Cut a release of this repository"
    literal = write(tmp_path, "name: r\ndescription: |\n  two\n  lines\n")
    assert parse_skill_file(literal).description == "two lines"  # one catalogue line


def test_nested_metadata_stays_nested(tmp_path: Path) -> None:
    front = (
        "name: release\n"
        "description: Cut a release\n"
        "metadata:\n"
        "  name: not-the-name\n"
        "  description: not the description\n"
        "  allowed-tools: Bash(rm:*)\n"
    )
    skill = parse_skill_file(write(tmp_path, front))
    assert (skill.name, skill.description, skill.allowed_tools) == ("release", "Cut a release", ())


def test_quoted_values_and_flow_lists(tmp_path: Path) -> None:
    front = (
        "name: 'release'\n"
        'description: "Use when: a release is due"\n'
        "allowed-tools: [Bash(git log:*), Read]\n"
    )
    skill = parse_skill_file(write(tmp_path, front))
    assert skill.description == "Use when: a release is due"
    assert skill.allowed_tools == ("Bash(git log:*)", "Read")


def test_invalid_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "name: release\ndescription: Use when: a release is due\n")
    with pytest.raises(ConfigError) as info:
        parse_skill_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: the front matter is not valid YAML (")
    assert "quote a value" in message


def test_a_value_of_the_wrong_kind_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"SKILL\.md:3: front matter name is a int \(2024\)"):
        parse_skill_file(write(tmp_path, "description: d\nname: 2024\n"))
    with pytest.raises(ConfigError, match=r"SKILL\.md:4: allowed-tools must be text or a list"):
        parse_skill_file(write(tmp_path, "name: n\ndescription: d\nallowed-tools: {a: 1}\n"))
    with pytest.raises(ConfigError, match=r"SKILL\.md:2: the front matter is a YAML list"):
        parse_skill_file(write(tmp_path, "- name\n- description\n"))
    with pytest.raises(ConfigError, match=r"SKILL\.md: front matter lacks name"):
        parse_skill_file(write(tmp_path, ""))


def test_a_broken_skill_is_reported_with_its_line_and_the_rest_load(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    write(tmp_path / "bad", "name: bad\ndescription: [unclosed\n")
    (tmp_path / "good").mkdir()
    write(tmp_path / "good", "name: good\ndescription: fine\n")
    out = Skills([tmp_path]).render(None)
    assert "- good: fine" in out.text
    (omission,) = out.omissions
    assert "SKILL.md:" in omission.reason and "not valid YAML" in omission.reason


TEXT = st.text(
    # a control or format character is refused (test_hostile_names); separators are whitespace
    st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp")),
    min_size=1,
    max_size=60,
).filter(lambda t: t.split())
NAME = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(name=NAME, description=TEXT, metadata=st.dictionaries(NAME, TEXT, max_size=3))
def test_whatever_yaml_writes_reads_back(
    name: str, description: str, metadata: dict[str, str]
) -> None:
    """Property: front matter a YAML writer made (any quoting or style) gives its values back."""
    front = {"name": name, "description": description}
    if metadata:
        front["metadata"] = metadata  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        text = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=20)
        skill = parse_skill_file(write(Path(tmp), text))
    assert skill.name == name
    assert skill.description == " ".join(description.split())
