from pathlib import Path

import agentkit_instructions_agentsmd as plugin
import pytest
from agentkit_instructions_agentsmd import AgentsMD

from agentkit_core import ConfigError
from agentkit_core import PluginManager
from agentkit_core.plugin import compose_instructions


def tree(tmp_path: Path) -> Path:
    (tmp_path / "AGENTS.md").write_text("root rules")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "AGENTS.md").write_text("pkg rules")
    (tmp_path / "pkg" / "CLAUDE.md").write_text("other tool's rules")
    leaf = tmp_path / "pkg" / "mod"
    leaf.mkdir()
    (leaf / "AGENTS.md").write_text("mod rules")
    return leaf


def test_chain_runs_from_root_down_to_path(tmp_path: Path) -> None:
    leaf = tree(tmp_path)
    text = AgentsMD(leaf, root=tmp_path).render(None).text
    assert text.index("root rules") < text.index("pkg rules") < text.index("mod rules")
    assert f"# From {tmp_path / 'AGENTS.md'}" in text


def test_directories_above_root_are_not_read(tmp_path: Path) -> None:
    leaf = tree(tmp_path)
    text = AgentsMD(leaf, root=tmp_path / "pkg").render(None).text
    assert "root rules" not in text and "pkg rules" in text


def test_a_preferred_name_shadows_the_others_and_says_so(tmp_path: Path) -> None:
    leaf = tree(tmp_path)
    out = AgentsMD(leaf, root=tmp_path, names=("AGENTS.md", "CLAUDE.md")).render(None)
    assert "other tool's rules" not in out.text
    (shadow,) = [o for o in out.omissions if o.reason == "shadowed"]
    assert shadow.what == str(tmp_path / "pkg" / "CLAUDE.md")
    assert shadow.by == str(tmp_path / "pkg" / "AGENTS.md")


def test_file_over_per_file_bound_is_left_out_whole(tmp_path: Path) -> None:
    leaf = tree(tmp_path)
    (tmp_path / "pkg" / "AGENTS.md").write_text("x" * 500)
    out = AgentsMD(leaf, root=tmp_path, max_file_bytes=100).render(None)
    assert "x" * 10 not in out.text and "mod rules" in out.text
    (o,) = out.omissions
    assert (o.reason, o.size, o.what) == (
        "over max_file_bytes",
        500,
        str(tmp_path / "pkg" / "AGENTS.md"),
    )


def test_total_bound_drops_the_files_nearest_the_root_first(tmp_path: Path) -> None:
    leaf = tree(tmp_path)
    full = AgentsMD(leaf, root=tmp_path).render(None).text
    bound = len(full.encode()) - 5
    out = AgentsMD(leaf, root=tmp_path, max_total_bytes=bound).render(None)
    assert "root rules" not in out.text and "mod rules" in out.text
    assert len(out.text.encode()) <= bound
    assert [o.what for o in out.omissions] == [str(tmp_path / "AGENTS.md")]


def test_kit_budget_binds_when_smaller_than_the_layers_own(tmp_path: Path) -> None:
    leaf = tree(tmp_path)
    source = AgentsMD(leaf, root=tmp_path)
    out = compose_instructions([source], budget=60)
    assert len(out.text.encode()) <= 60
    assert {o.reason for o in out.omissions} == {"over budget"}


def test_bad_paths_are_refused_with_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        AgentsMD(tmp_path / "nope")
    with pytest.raises(ConfigError, match="is not above path"):
        AgentsMD(tmp_path, root=tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="extra file"):
        AgentsMD(tmp_path, root=tmp_path, extra=[tmp_path / "missing.md"])


def test_registered_as_the_agentsmd_part() -> None:
    pm = PluginManager(entry_points=False, plugins=[plugin])
    assert pm.lookup("instruction_parts", "agentsmd").value is AgentsMD


@pytest.mark.parametrize(
    ("option", "given"),
    [("path", {"path": "\x00"}), ("root", {"root": "a\x00b"}), ("extra", {"extra": ["x\x00"]})],
)
def test_a_path_no_file_can_have_is_a_config_error_naming_the_option(
    option: str, given: dict[str, object]
) -> None:
    """A NUL byte (hypothesis drew one in CI): not the ValueError os.lstat raises."""
    with pytest.raises(ConfigError, match=f"agentsmd {option}=") as refused:
        AgentsMD(**given)  # type: ignore[arg-type]
    assert refused.value.source == f"agentsmd {option}="


def test_a_path_the_system_refuses_as_too_long_does_not_exist() -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        AgentsMD("x" * 5000)
