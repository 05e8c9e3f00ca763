"""Skill directories reached through links: a linked skill is found (``Path.rglob`` on Python
3.11 and 3.12 passed over it), a loop of links ends, a directory two links reach is walked once,
and a skill's digest covers the files behind a linked directory of it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from agentkit_instructions_skills import Skills
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st


def skill(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: Does {name}\n---\nSteps.\n")
    return path


def test_a_skill_linked_into_the_skills_directory_is_found(tmp_path: Path) -> None:
    skill(tmp_path / "dotfiles" / "release", "release")
    skill(tmp_path / "dotfiles" / "team" / "triage", "triage")
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "release").symlink_to(tmp_path / "dotfiles" / "release")
    (tmp_path / "skills" / "team").symlink_to("../dotfiles/team")  # relative, and one level up
    catalogue = Skills([tmp_path / "skills"])
    assert [(s.name, s.location) for s in catalogue.skills] == [
        ("release", str(tmp_path / "skills" / "release" / "SKILL.md")),
        ("triage", str(tmp_path / "skills" / "team" / "triage" / "SKILL.md")),
    ]
    assert catalogue.render(None).omissions == ()


def test_a_loop_of_links_ends_and_finds_each_skill_once(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    skill(root / "a", "a")
    (root / "a" / "up").symlink_to("..")  # back to the skills directory
    (root / "self").symlink_to(".")
    (root / "b").symlink_to("a")  # a second way into a
    (root / "b2").symlink_to("b")
    catalogue = Skills([root])
    assert [(s.name, s.location) for s in catalogue.skills] == [("a", str(root / "a" / "SKILL.md"))]
    assert catalogue.render(None).omissions == ()  # not found again, so not "shadowed"


def test_the_digest_covers_the_files_behind_a_linked_directory(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "release.sh").write_text("echo one")
    skill(tmp_path / "skills" / "release", "release")
    (tmp_path / "skills" / "release" / "scripts").symlink_to(tmp_path / "shared")
    first = Skills([tmp_path / "skills"]).get("release")
    (tmp_path / "shared" / "release.sh").write_text("echo two")  # what the grant lets it run
    second = Skills([tmp_path / "skills"]).get("release")
    assert first is not None and second is not None
    assert first.digest != second.digest


@st.composite
def link_graphs(draw: st.DrawFn) -> tuple[list[int], list[tuple[int, int]]]:
    """A tree of directories (each one's parent an earlier one) and links from any to any."""
    size = draw(st.integers(1, 7))
    parents = [draw(st.integers(0, i - 1)) for i in range(1, size)]
    pairs = st.tuples(st.integers(0, size - 1), st.integers(0, size - 1))
    return parents, draw(st.lists(pairs, max_size=8))


@settings(max_examples=60, deadline=None)
@given(link_graphs())
def test_every_directory_is_walked_once_whatever_the_links(
    graph: tuple[list[int], list[tuple[int, int]]],
) -> None:
    """Property: links in any shape (loops, cycles, several to one directory) find each real
    directory's skill exactly once: none missed, none found twice (which would be "shadowed")."""
    parents, links = graph
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [Path(tmp) / "d0"]
        for i, parent in enumerate(parents, start=1):
            dirs.append(dirs[parent] / f"d{i}")
        for i, directory in enumerate(dirs):
            skill(directory, f"s{i}")
        for n, (source, target) in enumerate(links):
            (dirs[source] / f"link{n}").symlink_to(dirs[target], target_is_directory=True)
        catalogue = Skills([dirs[0]])
        found = sorted(s.name for s in catalogue.skills)
        omissions = catalogue.render(None).omissions
    assert found == sorted(f"s{i}" for i in range(len(dirs)))
    assert omissions == ()
