"""Files a hostile or broken tree puts where AGENTS.md goes: a link out of the tree (to a
secret, to ``/proc/self/environ``), a loop, a directory, a FIFO, bytes that are not UTF-8, a
name that is a path. Each is a ConfigError naming the file and the fix, never a traceback,
replaced characters, or a secret sent to the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agentkit_instructions_agentsmd import AgentsMD
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (tmp_path / "secret.txt").write_text("AWS_SECRET=hunter2")
    return repo


@pytest.mark.parametrize("rooted", [True, False])
def test_a_link_out_of_the_tree_is_refused(tmp_path: Path, rooted: bool) -> None:
    repo = project(tmp_path)
    (repo / "AGENTS.md").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ConfigError, match=r"links to .*secret\.txt.*outside") as caught:
        AgentsMD(repo, root=repo if rooted else None)
    assert str(repo / "AGENTS.md") in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_a_link_to_the_process_environment_is_refused_without_a_root(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / "AGENTS.md").symlink_to("/proc/self/environ")
    with pytest.raises(ConfigError, match="outside"):
        AgentsMD(repo)


def test_a_link_inside_the_tree_is_read(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / "CLAUDE.md").write_text("shared rules")
    (repo / "AGENTS.md").symlink_to("CLAUDE.md")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "AGENTS.md").symlink_to("../CLAUDE.md")  # up to the root given: fine
    text = AgentsMD(repo / "pkg", root=repo).render(None).text
    assert text.count("shared rules") == 2


@pytest.mark.parametrize("kind", ["directory", "dangling", "loop", "fifo"])
def test_what_is_not_a_regular_file_is_an_error(tmp_path: Path, kind: str) -> None:
    repo = project(tmp_path)
    entry = repo / "AGENTS.md"
    if kind == "directory":
        entry.mkdir()
    elif kind == "dangling":
        entry.symlink_to("missing.md")
    elif kind == "loop":
        entry.symlink_to(entry)
    else:
        os.mkfifo(entry)  # reading it would block for ever
    with pytest.raises(ConfigError, match="is not a regular file") as caught:
        AgentsMD(repo, root=repo)
    assert str(entry) in str(caught.value)


def test_bytes_that_are_not_utf8_name_the_file_and_the_fix(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / "AGENTS.md").write_bytes(b"caf\xe9 rules")
    with pytest.raises(ConfigError, match=r"not UTF-8 text \(byte 0xe9 at offset 3\); save it"):
        AgentsMD(repo, root=repo)


def test_a_bom_is_dropped_and_crlf_kept_as_text(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / "AGENTS.md").write_bytes(b"\xef\xbb\xbfBe brief.\r\nTest first.\r\n")
    text = AgentsMD(repo, root=repo).render(None).text
    assert "\ufeff" not in text and text.endswith("Be brief.\r\nTest first.")


@pytest.mark.parametrize("name", ["../secret.txt", "sub/AGENTS.md", "..", "", "a\0b"])
def test_a_name_that_is_a_path_is_refused(tmp_path: Path, name: str) -> None:
    repo = project(tmp_path)
    with pytest.raises(ConfigError, match="is not a file name"):
        AgentsMD(repo, root=repo, names=(name,))


@pytest.mark.parametrize("bound", [-1, True, 1.5, "64k"])
def test_a_bound_that_is_not_a_byte_count_is_refused(tmp_path: Path, bound: object) -> None:
    with pytest.raises(ConfigError, match=r"max_file_bytes=.* is not a number of bytes"):
        AgentsMD(project(tmp_path), max_file_bytes=bound)  # type: ignore[arg-type]


def test_a_file_whose_size_is_not_reported_is_still_bounded(tmp_path: Path) -> None:
    # /proc files report 0 bytes: the read itself stops at the bound
    out = AgentsMD(project(tmp_path), extra=["/proc/self/environ"], max_file_bytes=4).render(None)
    assert out.text == ""
    assert [o.reason for o in out.omissions] == ["over max_file_bytes"]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=40))
def test_any_bytes_are_their_exact_text_or_an_error_naming_the_file(
    tmp_path: Path, data: bytes
) -> None:
    repo = tmp_path / "any"
    repo.mkdir(exist_ok=True)
    (repo / "AGENTS.md").write_bytes(data)
    try:
        text = AgentsMD(repo, root=repo).render(None).text
    except ConfigError as exc:
        assert str(repo / "AGENTS.md") in str(exc) and "save it as UTF-8" in str(exc)
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8-sig")
        return
    assert text == f"# From {repo / 'AGENTS.md'}\n\n{data.decode('utf-8-sig').strip()}"
