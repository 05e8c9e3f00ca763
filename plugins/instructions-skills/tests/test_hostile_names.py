"""A skill name shows the model one name and means that one: a control, bidi or zero-width
character, a name NFKC changes (fullwidth), a Latin name with a Cyrillic lookalike letter, or
a name differing from another only in case is refused or shadowed, and reported naming the
file. A description holding a control, bidi, zero-width or tag character is refused the same
way. A BOM or non-UTF-8 bytes are read or named with the fix, never misreported."""

from __future__ import annotations

import json
import re
import tempfile
import unicodedata
from pathlib import Path

import pytest
import yaml
from agentkit_instructions_skills import Skills
from agentkit_instructions_skills import parse_skill_file
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError


def skill(root: Path, folder: str, name: str, description: str = "Does a thing") -> Path:
    directory = root / folder
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    front = f"name: {json.dumps(name)}\ndescription: {json.dumps(description)}\n"
    path.write_text(f"---\n{front}---\nbody\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("deploy\u200b", "invisible or control character U+200B"),
        ("ev\u202eil", "invisible or control character U+202E"),
        ("ev\x1bil", "invisible or control character U+001B"),
        ("\uff44\uff45\uff50\uff4c\uff4f\uff59", "not in NFKC form (it reads as 'deploy')"),
        ("d\u0435ploy", "mixes Latin letters with Greek or Cyrillic lookalikes"),
    ],
)
def test_a_name_that_reads_as_another_is_refused(tmp_path: Path, name: str, problem: str) -> None:
    path = skill(tmp_path, "x", name)
    with pytest.raises(ConfigError, match=re.escape(problem)) as caught:
        parse_skill_file(path)
    assert f"{path}:2:" in str(caught.value)


def test_a_lookalike_of_a_trusted_skill_is_not_offered(tmp_path: Path) -> None:
    skill(tmp_path / "trusted", "deploy", "deploy", "The real deploy")
    skill(tmp_path / "repo", "deploy", "d\u0435ploy", "Looks the same")
    skill(tmp_path / "repo", "Deploy", "Deploy", "Differs in case")
    catalogue = Skills([tmp_path / "trusted", tmp_path / "repo"])
    rendered = catalogue.render(None)
    assert [s.name for s in catalogue.skills] == ["deploy"]
    reasons = sorted(o.reason.split(":")[0] for o in rendered.omissions)
    assert reasons == ["invalid", "shadowed"]


def test_a_name_in_another_script_alone_is_a_name(tmp_path: Path) -> None:
    for name in ("развернуть", "部署", "déployer", "release-notes"):
        assert parse_skill_file(skill(tmp_path, name, name)).name == name


def test_a_bom_is_not_part_of_the_front_matter(tmp_path: Path) -> None:
    path = skill(tmp_path, "bom", "bom")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    assert parse_skill_file(path).name == "bom"


def test_bytes_that_are_not_utf8_name_the_file_and_the_fix(tmp_path: Path) -> None:
    path = skill(tmp_path, "latin", "latin")
    path.write_bytes(path.read_bytes().replace(b"Does", b"D\xe9es"))
    with pytest.raises(ConfigError, match=r"SKILL\.md: not UTF-8 text \(byte 0xe9 .*save it"):
        parse_skill_file(path)


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=8))
def test_an_accepted_name_is_visible_and_stable(tmp_path: Path, name: str) -> None:
    path = skill(tmp_path, "any", name)
    try:
        accepted = parse_skill_file(path).name
    except ConfigError as exc:
        assert str(path) in str(exc)
        return
    assert unicodedata.normalize("NFKC", accepted) == accepted
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") for c in accepted)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.from_regex(r"[a-zA-Z][a-zA-Z0-9-]{0,6}", fullmatch=True))
def test_names_one_in_case_are_one_skill(tmp_path: Path, name: str) -> None:
    root = tmp_path / name.lower()
    skill(root, "a", name.lower())
    skill(root, "b", name.upper())
    catalogue = Skills([root])
    assert [s.name for s in catalogue.skills] == [name.lower()]


@pytest.mark.parametrize(
    ("description", "problem"),
    [
        ("Deploy \u202egnp.exe", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("Deploy \u2066safely\u2069", "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
        ("Deploy\u200b it", "U+200B (ZERO WIDTH SPACE)"),
        ("Deploy \U000e0069\U000e0067\U000e006e", "U+E0069 (TAG LATIN SMALL LETTER I)"),
        ("Deploy\x1b[2J it", "U+001B"),
        ("Deploy\x07 it", "U+0007"),
        ("Deploy\ufeff it", "U+FEFF (ZERO WIDTH NO-BREAK SPACE)"),
    ],
)
def test_a_description_with_an_unseen_character_is_refused(
    tmp_path: Path, description: str, problem: str
) -> None:
    path = dumped(tmp_path, description)
    with pytest.raises(ConfigError) as caught:
        parse_skill_file(path)
    assert str(caught.value) == (
        f"{path}:3: the skill description holds the invisible or control character {problem}; "
        "remove it (a person would not see it, the model would)"
    )


def test_a_skill_with_such_a_description_is_left_out_and_the_rest_load(tmp_path: Path) -> None:
    skill(tmp_path, "evil", "evil", "Safe \u202eexe.sh")
    skill(tmp_path, "good", "good", "Folded\tand\nspaced\u2028lines")  # whitespace: one space
    rendered = Skills([tmp_path]).render(None)
    assert "- good: Folded and spaced lines" in rendered.text
    assert "\u202e" not in rendered.text
    (omission,) = rendered.omissions
    assert omission.reason.startswith(f"invalid: {tmp_path / 'evil' / 'SKILL.md'}:3: the skill")


def dumped(directory: Path, description: str) -> Path:
    """A SKILL.md whose front matter a YAML writer made: it escapes what it cannot write."""
    front = yaml.safe_dump(
        {"name": "n", "description": description}, allow_unicode=True, sort_keys=False
    )
    path = directory / "SKILL.md"
    path.write_text(f"---\n{front}---\nbody\n", encoding="utf-8")
    return path


UNSEEN = st.characters(categories=("Cc", "Cf")).filter(lambda c: not c.isspace())
SEEN = st.text(st.characters(exclude_categories=("Cc", "Cf", "Cs")), max_size=10)


@settings(max_examples=80, deadline=None)
@given(before=SEEN, bad=UNSEEN, after=SEEN)
def test_any_control_or_format_character_in_a_description_is_refused(
    before: str, bad: str, after: str
) -> None:
    """Property: a description holding a character of category Cc or Cf that is not whitespace
    is refused, and the error names the file, the line and that character's code point."""
    with tempfile.TemporaryDirectory() as tmp:
        path = dumped(Path(tmp), before + bad + after)
        with pytest.raises(ConfigError) as caught:
            parse_skill_file(path)
    assert str(caught.value).startswith(f"{path}:3: the skill description holds")
    assert f"character U+{ord(bad):04X}" in str(caught.value)


@settings(max_examples=80, deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_an_accepted_description_holds_nothing_unseen(description: str) -> None:
    """Property: whatever the description, an accepted one has no control, format or surrogate
    character (whitespace collapsed to single spaces); a refused one names its file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = dumped(Path(tmp), description)
        try:
            accepted = parse_skill_file(path).description
        except ConfigError as exc:
            assert str(path) in str(exc)
            return
    assert accepted == " ".join(accepted.split())
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in accepted)
