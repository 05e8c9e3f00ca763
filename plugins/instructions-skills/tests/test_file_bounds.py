"""A SKILL.md is read bounded: one over ``max_file_bytes`` is left out whole and reported with
its size, the bound and the fix; a FIFO, ``/dev/zero`` or a link to nothing under the name is
reported, never waited on or read without end; a file of the skill that is not a regular file
does not hold up its digest."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import agentkit_instructions_skills
import pytest
from agentkit_instructions_skills import Skills
from agentkit_instructions_skills import parse_skill_file
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import PluginManager

FRONT = "---\nname: big\ndescription: A long skill\n---\n"


def sized(directory: Path, size: int) -> Path:
    """A valid SKILL.md of exactly ``size`` bytes (at least the front matter's)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_bytes((FRONT + "x" * (size - len(FRONT))).encode())
    return path


def test_a_skill_file_over_the_bound_is_left_out_and_named(tmp_path: Path) -> None:
    path = sized(tmp_path / "big", 70_000)
    sized(tmp_path / "small", 1000).write_text(FRONT.replace("big", "small") + "Steps.")
    catalogue = Skills([tmp_path])
    assert [s.name for s in catalogue.skills] == ["small"]
    (omission,) = catalogue.render(None).omissions
    assert (omission.what, omission.size) == (str(path), 70_000)
    assert omission.reason == (
        f"over max_file_bytes: {path}: 70000 bytes, over the bound of 65536 bytes on a skill "
        "file (max_file_bytes); keep SKILL.md to the steps and move the detail into other files "
        "of the skill that it names, or raise max_file_bytes"
    )
    assert [s.name for s in Skills([tmp_path], max_file_bytes=70_000).skills] == ["big", "small"]


def test_the_bound_is_an_option_checked_like_any_other(tmp_path: Path) -> None:
    sized(tmp_path / "big", 500)
    manager = PluginManager(entry_points=False, plugins=[agentkit_instructions_skills])
    parts = {"skills": {"dirs": [tmp_path], "max_file_bytes": 100}}
    kit = Kit(model="test", manager=manager, parts=parts)
    (omission,) = kit.omitted()
    assert (omission.reason.split(":")[0], omission.size) == ("over max_file_bytes", 500)
    for bad in (-1, True, "64k", 1.5):
        with pytest.raises(ConfigError, match=re.escape(f"max_file_bytes={bad!r} is not a number")):
            Skills([tmp_path], max_file_bytes=bad)  # type: ignore[arg-type]


@pytest.mark.timeout(30)  # before the fix the read waited for a writer for ever
def test_a_fifo_named_skill_md_is_reported_not_waited_on(tmp_path: Path) -> None:
    (tmp_path / "pipe").mkdir()
    os.mkfifo(tmp_path / "pipe" / "SKILL.md")
    sized(tmp_path / "ok", 200)
    catalogue = Skills([tmp_path])
    assert [s.name for s in catalogue.skills] == ["big"]
    (omission,) = catalogue.render(None).omissions
    assert omission.reason == (
        f"invalid: {tmp_path / 'pipe' / 'SKILL.md'}: not a regular file (a FIFO, a device or a "
        "directory); make it the skill's instructions file or remove it"
    )


@pytest.mark.timeout(30)
def test_a_link_to_an_endless_device_is_reported(tmp_path: Path) -> None:
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "SKILL.md").symlink_to("/dev/zero")  # read whole: memory without end
    with pytest.raises(ConfigError, match=r"SKILL\.md: not a regular file"):
        parse_skill_file(tmp_path / "zero" / "SKILL.md")


def test_a_link_to_nothing_or_a_loop_is_reported_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "SKILL.md").symlink_to("missing.md")
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "SKILL.md").symlink_to("SKILL.md")
    reasons = [o.reason for o in Skills([tmp_path]).render(None).omissions]
    assert reasons == [
        f"invalid: {tmp_path / 'gone' / 'SKILL.md'}: cannot be read (No such file or directory); "
        "give the agent read access to it, or remove it",
        f"invalid: {tmp_path / 'loop' / 'SKILL.md'}: cannot be read (Too many levels of symbolic "
        "links); give the agent read access to it, or remove it",
    ]


@pytest.mark.timeout(30)
def test_a_fifo_among_the_skills_files_does_not_hold_up_its_digest(tmp_path: Path) -> None:
    path = sized(tmp_path / "s", 200)
    os.mkfifo(tmp_path / "s" / "pipe")
    (tmp_path / "s" / "zero").symlink_to("/dev/zero")
    skill = parse_skill_file(path)
    assert skill.name == "big" and len(skill.digest) == 64


@settings(max_examples=40, deadline=None)
@given(size=st.integers(len(FRONT), 600), bound=st.integers(0, 600))
def test_a_file_is_kept_exactly_when_it_fits_the_bound(size: int, bound: int) -> None:
    """Property: a SKILL.md is in the catalogue iff its bytes are at most the bound; otherwise
    the omission carries its size and names the bound."""
    with tempfile.TemporaryDirectory() as tmp:
        path = sized(Path(tmp) / "s", size)
        catalogue = Skills([tmp], max_file_bytes=bound)
    if size <= bound:
        assert [s.name for s in catalogue.skills] == ["big"]
    else:
        (omission,) = catalogue.render(None).omissions
        assert (omission.what, omission.size) == (str(path), size)
        assert f"{size} bytes, over the bound of {bound} bytes" in omission.reason
