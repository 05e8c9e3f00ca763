from pathlib import Path

import agentkit_instructions_skills as plugin
import pytest
from agentkit_instructions_skills import USAGE
from agentkit_instructions_skills import Skills

from agentkit_core import ConfigError
from agentkit_core import PluginManager
from agentkit_core.testing import make_test_ctx


def skill(root: Path, folder: str, name: str, description: str, body: str = "do it") -> Path:
    d = root / folder
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return d / "SKILL.md"


def test_catalogue_lists_skills_and_usage_only_with_the_tool(tmp_path: Path) -> None:
    skill(tmp_path, "release", "release", "Cut a release")
    with_tool = Skills([tmp_path])
    text = with_tool.render(None).text
    assert "- release: Cut a release" in text and USAGE in text
    assert [t.name for t in with_tool.tools] == ["read_skill"]
    without = Skills([tmp_path], offer_tool=False)
    assert USAGE not in without.render(None).text and not without.tools


async def test_read_skill_serves_the_body_and_names_known_skills(tmp_path: Path) -> None:
    skill(tmp_path, "release", "release", "Cut a release", body="1. bump\n2. tag")
    (tool,) = Skills([tmp_path]).tools
    ok = await tool.invoke({"name": "release"}, make_test_ctx())
    assert ok.content == "1. bump\n2. tag" and not ok.is_error
    bad = await tool.invoke({"name": "nope"}, make_test_ctx())
    assert bad.is_error and "release" in str(bad.content)


def test_required_directory_must_exist_optional_is_passed_over(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        Skills([tmp_path / "missing"])
    skills = Skills(optional_dirs=[tmp_path / "missing"])
    assert skills.render(None).text == "" and not skills.tools


def test_first_directory_shadows_a_skill_of_the_same_name(tmp_path: Path) -> None:
    first = skill(tmp_path / "a", "x", "deploy", "first")
    second = skill(tmp_path / "b", "y", "deploy", "second")
    out = Skills([tmp_path / "a", tmp_path / "b"]).render(None)
    assert "first" in out.text and "second" not in out.text
    (o,) = out.omissions
    assert (o.what, o.reason, o.by) == (str(second), "shadowed", str(first))


def test_invalid_front_matter_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "SKILL.md").write_text("no front matter")
    skill(tmp_path, "good", "good", "fine")
    out = Skills([tmp_path]).render(None)
    assert "- good: fine" in out.text
    assert [o.reason.split(":")[0] for o in out.omissions] == ["invalid"]


def test_budget_drops_skills_that_do_not_fit_and_reports_them(tmp_path: Path) -> None:
    for i in range(5):
        skill(tmp_path, f"s{i}", f"skill{i}", "d" * 40)
    skills = Skills([tmp_path])
    full = skills.render(None).text
    out = skills.render(len(full.encode()) - 10)
    assert len(out.text.encode()) <= len(full.encode()) - 10
    assert [o.reason for o in out.omissions] == ["over budget"]
    assert skills.render(10).text == ""


def test_reload_picks_up_new_skills(tmp_path: Path) -> None:
    skills = Skills([tmp_path])
    assert skills.render(None).text == ""
    skill(tmp_path, "new", "new", "appeared")
    skills.reload()
    assert "- new: appeared" in skills.render(None).text


def test_registered_as_the_skills_part() -> None:
    pm = PluginManager(entry_points=False, plugins=[plugin])
    assert pm.lookup("instruction_parts", "skills").value is Skills
