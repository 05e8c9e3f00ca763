"""A skill's allowed-tools: parsed from its front matter, granted to the run's policy engine when
the model reads it, and only when the product trusts the skill."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from agentkit_instructions_skills import Skill
from agentkit_instructions_skills import Skills
from agentkit_instructions_skills import parse_allowed_tools
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import ToolCall
from agentkit_core import ToolDecision
from agentkit_core.plugin import Grant
from agentkit_core.plugin import Grantor
from agentkit_core.plugin import PolicyEngine
from agentkit_core.plugin import Verdict


class GrantsOnly(PolicyEngine):
    """Asks about everything but what a grant names."""

    name = "grants-only"

    def evaluate(self, call: ToolCall, source: str | None, grants: Sequence[Any]) -> ToolDecision:
        if any(call.name in g for g in grants):
            return ToolDecision("allow", "granted", rule=f"grant:{call.name}")
        return ToolDecision("ask", "asks", rule="default")

    def removes(self, name: str, source: str) -> bool:
        return False

    def compile_grant(self, grant: Grant) -> Any:
        return frozenset(grant.tools), grant.tools, ()


def skill(root: Path, name: str, front: str = "", body: str = "do it") -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n{front}---\n{body}\n")
    return d


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        ("Bash(git status:*), Read", ("Bash(git status:*)", "Read")),
        ("Bash(git status:*) Read Grep", ("Bash(git status:*)", "Read", "Grep")),
        ("[Read, Grep]", ("Read", "Grep")),
        ("Bash(git diff --stat:*)", ("Bash(git diff --stat:*)",)),
        ("'Read', \"Grep\"", ("Read", "Grep")),
        ("", ()),
    ],
)
def test_allowed_tools_split_outside_brackets(text: str, entries: tuple[str, ...]) -> None:
    assert parse_allowed_tools(text) == entries


@given(
    st.lists(st.from_regex(r"[A-Za-z_]{1,8}(\([a-z :*./-]{1,12}\))?", fullmatch=True), max_size=5)
)
def test_allowed_tools_read_back_what_was_written(entries: list[str]) -> None:
    assert parse_allowed_tools(", ".join(entries)) == tuple(entries)


def test_front_matter_gives_allowed_tools_inline_or_as_a_list(tmp_path: Path) -> None:
    skill(tmp_path, "inline", "allowed-tools: Bash(git log:*), Read\n")
    skill(tmp_path, "listed", "allowed-tools:\n  - Bash(git log:*)\n  - Read\n")
    skill(tmp_path, "none")
    skills = Skills([tmp_path])
    inline, listed, none = (skills.get(n) for n in ("inline", "listed", "none"))
    assert inline is not None and listed is not None and none is not None
    assert inline.allowed_tools == listed.allowed_tools == ("Bash(git log:*)", "Read")
    assert none.allowed_tools == ()


def test_the_digest_covers_every_file_of_the_skill(tmp_path: Path) -> None:
    d = skill(tmp_path, "release", "allowed-tools: Bash(./release.sh)\n")
    (d / "release.sh").write_text("echo one")
    first = Skills([tmp_path]).get("release")
    assert first is not None and len(first.digest) == 64
    assert Skills([tmp_path]).get("release") == first  # the same skill, the same digest
    (d / "release.sh").write_text("echo two")  # a script the grant lets it run changed
    second = Skills([tmp_path]).get("release")
    assert second is not None and second.digest != first.digest


def test_trust_is_off_by_default_and_may_be_per_skill(tmp_path: Path) -> None:
    skill(tmp_path, "ours", "allowed-tools: Read\n")
    skill(tmp_path, "theirs", "allowed-tools: Read\n")
    assert not Skills([tmp_path]).current_grant("skill:ours").trusted  # type: ignore[union-attr]
    per = Skills([tmp_path], trusted=lambda s: s.name == "ours")
    assert per.current_grant("skill:ours").trusted  # type: ignore[union-attr]
    assert not per.current_grant("skill:theirs").trusted  # type: ignore[union-attr]
    assert per.current_grant("skill:gone") is None and per.current_grant("other:ours") is None
    assert isinstance(per, Grantor)
    with pytest.raises(ConfigError, match="trusted= takes true, false or a function"):
        Skills([tmp_path], trusted="yes")  # type: ignore[arg-type]


async def read(skills: Skills, name: str, engine: PolicyEngine | None, seen: list[Verdict]) -> Any:
    (tool,) = skills.tools
    agent = Agent("a", "test", policy=engine, verdict_observer=seen.append)
    return await tool.invoke({"name": name}, agent.new_context("r1"))


async def test_reading_a_trusted_skill_grants_its_tools_in_the_conversation(tmp_path: Path) -> None:
    skill(tmp_path, "release", "allowed-tools: write, Bash(x)\n")
    engine = GrantsOnly()
    seen: list[Verdict] = []
    result = await read(Skills([tmp_path], trusted=True), "release", engine, seen)
    assert result.content == "do it"
    assert result.structured["granted"] == ["write", "Bash(x)"]
    (grant,) = seen
    assert (grant.namespace, grant.hook, grant.verdict, grant.subject) == (
        "policy",
        "grant",
        "allow",
        "skill:release",
    )
    assert grant.scope == "run:r1" and grant.run == "r1" and len(grant.subject_id) == 64
    assert engine.would(ToolCall("c", "write", "{}"), scope="run:r1").kind == "allow"
    assert "read_skill with name 'release'" in engine.grants("run:r1")[0][0].reread


async def test_an_untrusted_skill_grants_nothing_and_says_why(tmp_path: Path) -> None:
    skill(tmp_path, "release", "allowed-tools: write\n")
    engine = GrantsOnly()
    seen: list[Verdict] = []
    result = await read(Skills([tmp_path]), "release", engine, seen)
    assert result.structured["granted"] == [] and result.structured["refused"] == ["write"]
    (grant,) = seen
    assert grant.verdict == "deny" and "not trusted" in grant.details["refused"][0]["reason"]
    assert engine.would(ToolCall("c", "write", "{}"), scope="run:r1").kind == "ask"


async def test_without_a_policy_or_allowed_tools_a_read_only_reads(tmp_path: Path) -> None:
    skill(tmp_path, "plain")
    skill(tmp_path, "asks", "allowed-tools: write\n")
    seen: list[Verdict] = []
    result = await read(Skills([tmp_path], trusted=True), "plain", GrantsOnly(), seen)
    assert "granted" not in result.structured and seen == []
    result = await read(Skills([tmp_path], trusted=True), "asks", None, seen)
    assert "granted" not in result.structured and seen == []


def test_a_skill_is_still_a_plain_value() -> None:
    assert Skill("a", "b", "c", "d") == Skill("a", "b", "c", "d", (), "")
